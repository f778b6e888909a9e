-- replay: a fixed set of `count` keys (prefix-r1 .. prefix-rN), key i always with SKU
-- ((i-1) % skus) + 1 and quantity 1, so every repeat has the same key and body.
--   mode=prime   each key is sent exactly once (thread t takes keys t, t+nthreads, ...), then
--                the thread stops: this creates the keys before the measured runs.
--   mode=replay  (default) the threads cycle through all keys round-robin; expect only 201
--                with Idempotent-Replayed: true.
package.path = (debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "?.lua;" .. package.path
local common = require("common")

common.install(function(s)
  local o = s.opts
  local i
  if o.mode == "prime" then
    s.i = (s.i or (s.tid - o.nthreads)) + o.nthreads
    if s.i > o.count then
      return nil
    end
    i = s.i
  else
    -- threads start at different offsets of the same cycle
    s.i = ((s.i or math.floor((s.tid - 1) * o.count / o.nthreads)) % o.count) + 1
    i = s.i
  end
  return string.format("%s-r%d", o.prefix, i), ((i - 1) % o.skus) + 1
end)
