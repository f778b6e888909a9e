-- create: every request a new Idempotency-Key (run prefix, thread id, counter), SKU random in
-- 1..skus, quantity 1. Expect only 201 with Idempotent-Replayed: false.
package.path = (debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "?.lua;" .. package.path
local common = require("common")

common.install(function(s)
  s.n = s.n + 1
  return string.format("%s-t%d-%d", s.opts.prefix, s.tid, s.n), math.random(1, s.opts.skus)
end)
