-- create-hot: every request a new Idempotency-Key, all on the one hot SKU (row-lock contention
-- on sku_inventory). Expect only 201 with Idempotent-Replayed: false.
package.path = (debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "?.lua;" .. package.path
local common = require("common")

common.install(function(s)
  s.n = s.n + 1
  return string.format("%s-t%d-%d", s.opts.prefix, s.tid, s.n), s.opts.hot
end)
