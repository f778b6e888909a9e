-- mixed: per thread the sequence new key, retry, retry, new key, retry, retry, ... (each retry
-- has the same key and body as its original). wrk does not tell a script which connection a
-- request goes on, so the sequence is per thread: with several connections per thread the two
-- retries usually go out on other connections while the original may still be in flight (a
-- concurrent duplicate). Expect 201 only: about 1/3 Idempotent-Replayed: false, 2/3 true.
package.path = (debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "?.lua;" .. package.path
local common = require("common")

common.install(function(s)
  local k = s.n % 3
  local idx = math.floor(s.n / 3)
  s.n = s.n + 1
  if k == 0 then
    s.sku = math.random(1, s.opts.skus)
  end
  return string.format("%s-t%d-%d", s.opts.prefix, s.tid, idx), s.sku
end)
