-- Shared machinery of the wrk scenario scripts (create, create-hot, replay, mixed).
--
-- A scenario script defines one function, next_order(state) -> key, skuId, and calls
-- common.install(next_order). This file then defines wrk's hooks:
--
--   setup(thread)   numbers the threads (tid 1..n) and keeps them for done().
--   init(args)      reads key=value arguments (passed after "--" on the wrk command line).
--   request()       builds POST /api/orders with a JWT, an Idempotency-Key and a JSON body.
--   response(...)   counts every status per thread; 201s split by Idempotent-Replayed.
--   delay()         0 ms while measuring; after the window, no new request is sent, so every
--                   request that was sent gets its answer (exact accounting for the DB check).
--   done(...)       sums the per-thread counts and prints one "BENCH ..." line for run.sh.
--
-- Arguments (key=value): prefix (key prefix, unique per run), token (JWT), window (seconds of
-- measurement), skus (SKU ids 1..skus), hot (hot SKU id), count (replay key count),
-- mode ("prime": send each replay key exactly once, then stop).

local ffi = require("ffi")
ffi.cdef [[
typedef struct { long tv_sec; long tv_nsec; } bench_timespec;
int clock_gettime(int clk_id, bench_timespec *tp);
]]
local ts = ffi.new("bench_timespec")
local CLOCK_MONOTONIC = 1

local function now()
  ffi.C.clock_gettime(CLOCK_MONOTONIC, ts)
  return tonumber(ts.tv_sec) + tonumber(ts.tv_nsec) / 1e9
end

local M = {}

-- main state (setup/done) ---------------------------------------------------------------
local threads = {}

-- per-thread state ----------------------------------------------------------------------
local opts = {}
local state = { n = 0 }           -- scenario sequence counter and scenario data
local verifying = false           -- wrk calls request() once on thread 1 to verify the script
local started, deadline = nil, nil
local stopped = false
sent, received, in_window = 0, 0, 0
lost = 0                          -- sent, but the connection failed before the answer came
new201, replay201, other201 = 0, 0, 0
statuses = {}                     -- non-201 status -> count
samples = {}                      -- first error bodies, for the log
window_s = 0                      -- this thread's measurement window (seconds), for done()
exhausted = false                 -- prime mode: all keys of this thread were sent

local function parse_args(args)
  for _, a in ipairs(args or {}) do
    local k, v = string.match(a, "^([%w_]+)=(.*)$")
    if not k then
      error("bad argument (want key=value): " .. tostring(a))
    end
    opts[k] = v
  end
end

function M.install(next_order)
  function setup(thread)
    table.insert(threads, thread)
    thread:set("tid", #threads)
  end

  function init(args)
    parse_args(args)
    if not opts.prefix or not opts.token or not opts.window then
      error("wrk script needs prefix=, token= and window= arguments")
    end
    -- Keys are [A-Za-z0-9_-] only: the prefix carries run id and scenario.
    if string.find(opts.prefix, "[^%w_-]") then
      error("prefix may contain only A-Z a-z 0-9 _ -")
    end
    opts.window = tonumber(opts.window)
    window_s = opts.window
    opts.skus = tonumber(opts.skus or "1000")
    opts.hot = tonumber(opts.hot or "0")
    opts.count = tonumber(opts.count or "0")
    opts.nthreads = tonumber(opts.nthreads or "1")
    state.tid = tid
    state.opts = opts
    verifying = (tid == 1)
    math.randomseed(os.time() * 1000 + tid)
    auth = "Bearer " .. opts.token
  end

  local function build(key, sku)
    local body = '{"skuId":' .. string.format("%d", sku) .. ',"quantity":1}'
    return wrk.format("POST", "/api/orders", {
      ["Authorization"] = auth,
      ["Content-Type"] = "application/json",
      ["Idempotency-Key"] = key,
    }, body)
  end

  -- Orders fetched by delay() for the request() that follows it on the same connection.
  local queue, qhead, qtail = {}, 1, 0

  function request()
    if verifying then
      -- wrk's start-up check of the script: never sent, so it must not consume a key.
      verifying = false
      return build(opts.prefix .. "-verify", 1)
    end
    local key, sku
    if qhead <= qtail then
      key, sku = queue[qhead][1], queue[qhead][2]
      queue[qhead] = nil
      qhead = qhead + 1
    else
      -- request() without delay() before it: wrk reconnected after a read or write error, so
      -- the request this connection had sent will never be answered.
      lost = lost + 1
      key, sku = next_order(state)
    end
    sent = sent + 1
    if key == nil then
      -- cannot happen in a normal run; harmless and visible (status 200 counts as an error)
      return wrk.format("GET", "/q/health/live")
    end
    return build(key, sku)
  end

  local function maybe_stop()
    if not stopped and received + lost >= sent and (exhausted or (deadline and now() > deadline)) then
      stopped = true
      -- run.sh waits for one DRAINED line per thread, then ends wrk with SIGINT (wrk's main
      -- thread otherwise sleeps for the whole -d).
      io.stdout:write(string.format("DRAINED thread %d\n", tid))
      io.stdout:flush()
      wrk.thread:stop()
    end
  end

  function delay()
    -- wrk calls delay() before every request on a connection (the first one too, since the
    -- script has a delay function); request() follows after the returned milliseconds.
    local t = now()
    if not started then
      started = t
      deadline = t + opts.window
    end
    if exhausted or t > deadline then
      maybe_stop()
      return 3600000
    end
    -- Take the next order now, so that a run out of keys (prime mode) is known before a
    -- request would have to be sent.
    local key, sku = next_order(state)
    if key == nil then
      exhausted = true
      maybe_stop()
      return 3600000
    end
    qtail = qtail + 1
    queue[qtail] = { key, sku }
    return 0
  end

  function response(status, headers, body)
    local t = now()
    received = received + 1
    if deadline and t <= deadline then
      in_window = in_window + 1
    end
    if status == 201 then
      local r = headers["Idempotent-Replayed"] or headers["idempotent-replayed"]
      if r == "false" then
        new201 = new201 + 1
      elseif r == "true" then
        replay201 = replay201 + 1
      else
        other201 = other201 + 1
      end
    else
      local s = tostring(status)
      statuses[s] = (statuses[s] or 0) + 1
      if #samples < 3 then
        table.insert(samples, s .. " " .. string.sub(tostring(body), 1, 300))
      end
    end
    maybe_stop()
  end

  function done(summary, latency, requests)
    local tot = { sent = 0, received = 0, lost = 0, new201 = 0, replay201 = 0, other201 = 0 }
    local codes = {}
    local rate = 0
    for _, thread in ipairs(threads) do
      local id = thread:get("tid")
      local s, r, w = thread:get("sent"), thread:get("received"), thread:get("in_window")
      local l = thread:get("lost")
      local n, p, o = thread:get("new201"), thread:get("replay201"), thread:get("other201")
      local win = tonumber(thread:get("window_s")) or 0
      tot.sent = tot.sent + s
      tot.received = tot.received + r
      tot.lost = tot.lost + l
      tot.new201 = tot.new201 + n
      tot.replay201 = tot.replay201 + p
      tot.other201 = tot.other201 + o
      local line = string.format("thread %d: sent=%d received=%d lost=%d in_window=%d 201_new=%d 201_replayed=%d 201_unmarked=%d",
        id, s, r, l, w, n, p, o)
      for code, c in pairs(thread:get("statuses")) do
        codes[code] = (codes[code] or 0) + c
        line = line .. string.format(" status_%s=%d", code, c)
      end
      print(line)
      for _, sample in ipairs(thread:get("samples")) do
        print(string.format("thread %d error sample: %s", id, sample))
      end
      if win > 0 then
        rate = rate + w / win
      end
    end
    local non201 = 0
    local codes_txt = ""
    for code, c in pairs(codes) do
      non201 = non201 + c
      codes_txt = codes_txt .. (codes_txt == "" and "" or ",") .. code .. ":" .. c
    end
    if codes_txt == "" then codes_txt = "-" end
    local e = summary.errors
    -- One machine-readable line; run.sh parses it. Latency in microseconds.
    print(string.format(
      "BENCH rps=%.1f p50_us=%d p99_us=%d sent=%d received=%d unanswered=%d lost=%d new201=%d replay201=%d " ..
      "unmarked201=%d non201=%d codes=%s connect=%d read=%d write=%d timeout=%d wrk_status_errors=%d wrk_requests=%d",
      rate, latency:percentile(50), latency:percentile(99), tot.sent, tot.received,
      tot.sent - tot.received, tot.lost, tot.new201, tot.replay201, tot.other201, non201, codes_txt,
      e.connect, e.read, e.write, e.timeout, e.status, summary.requests))
  end
end

return M
