-- Shared by attempts.lua and reads.lua (they load it with dofile).
--
-- Each wrk thread drives exactly one connection (bench/throughput.py runs wrk with as
-- many threads as connections), so a request's latency is the time from request() to
-- response(). wrk's own latency statistics are not used for the percentiles: before
-- done() wrk adds invented samples to them (its coordinated-omission correction).
--
-- After `seconds` a thread sends nothing more: it waits for the answer it has in flight
-- and stops (a stopped thread's idle connection is no longer read, so the server closing
-- it later is not counted as a read error). wrk runs for `seconds` plus a grace period,
-- so every request sent is answered before wrk ends and a bench can compare 2xx answers
-- with the rows written.

local ffi = require("ffi")
ffi.cdef([[
typedef struct { long tv_sec; long tv_nsec; } bench_timespec;
int clock_gettime(int clock_id, bench_timespec *tp);
]])
local CLOCK_MONOTONIC = 1
local timespec = ffi.new("bench_timespec")

function bench_now()
  ffi.C.clock_gettime(CLOCK_MONOTONIC, timespec)
  return tonumber(timespec.tv_sec) + tonumber(timespec.tv_nsec) / 1e9
end

-- Setup and done run in wrk's main Lua state; the other functions in each thread's own.
local threads = {}

function setup(thread)
  thread:set("id", #threads)
  table.insert(threads, thread)
end

-- Called from each script's init(); the globals below are read back in done().
function bench_start(seconds)
  started = bench_now()
  deadline = started + seconds
  last_answer = started
  sent_at = started
  in_flight = false
  answered, ok, not_modified, other = 0, 0, 0, 0
  latency_bins = {} -- latency in tenths of a millisecond -> count
end

function bench_sent()
  sent_at = bench_now()
  in_flight = true
end

function delay()
  if bench_now() < deadline then
    return 0
  end
  wrk.thread:stop()
  return 3600 * 1000
end

function response(status, headers, body)
  local now = bench_now()
  local bin = math.floor((now - sent_at) * 10000)
  latency_bins[bin] = (latency_bins[bin] or 0) + 1
  in_flight = false
  last_answer = now
  answered = answered + 1
  if status >= 200 and status < 300 then
    ok = ok + 1
  elseif status == 304 then
    not_modified = not_modified + 1
  else
    other = other + 1
  end
  if bench_on_response then
    bench_on_response(status, headers, body)
  end
  if now >= deadline then
    wrk.thread:stop()
  end
end

local function percentile_ms(bins, keys, total, share)
  local wanted = math.max(1, math.ceil(total * share))
  local seen = 0
  for _, bin in ipairs(keys) do
    seen = seen + bins[bin]
    if seen >= wanted then
      return (bin + 0.5) / 10
    end
  end
  return 0
end

-- One line for bench/throughput.py: "wrk-result name=value ...".
function done(summary, latency, requests)
  local bins, totals = {}, { answered = 0, ok = 0, not_modified = 0, other = 0, in_flight = 0 }
  local first, last = math.huge, 0
  for _, thread in ipairs(threads) do
    for bin, count in pairs(thread:get("latency_bins")) do
      bins[bin] = (bins[bin] or 0) + count
    end
    for name in pairs(totals) do
      local value = thread:get(name)
      if type(value) == "boolean" then
        value = value and 1 or 0
      end
      totals[name] = totals[name] + value
    end
    first = math.min(first, thread:get("started"))
    last = math.max(last, thread:get("last_answer"))
  end
  local keys = {}
  for bin in pairs(bins) do
    table.insert(keys, bin)
  end
  table.sort(keys)
  local n = totals.answered
  local errors = summary.errors
  io.write(string.format(
    "wrk-result answered=%d ok=%d not_modified=%d other=%d in_flight=%d seconds=%.3f "
      .. "p50_ms=%.1f p90_ms=%.1f p99_ms=%.1f max_ms=%.1f wrk_p99_ms=%.1f "
      .. "connect_errors=%d read_errors=%d write_errors=%d timeouts=%d\n",
    n, totals.ok, totals.not_modified, totals.other, totals.in_flight,
    math.max(last - first, 0),
    percentile_ms(bins, keys, n, 0.50), percentile_ms(bins, keys, n, 0.90),
    percentile_ms(bins, keys, n, 0.99), #keys > 0 and (keys[#keys] + 1) / 10 or 0,
    latency:percentile(99.0) / 1000,
    errors.connect, errors.read, errors.write, errors.timeout
  ))
end
