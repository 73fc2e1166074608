-- Rules-mode calls to the Dify bridge, each recording an attempt.
--   wrk -t C -c C -d S+G -s attempts.lua URL -- KEY CHALLENGE_ID RUN_PREFIX SECONDS
-- A new workflow_run_id per call (run prefix, thread, counter: unique across threads and
-- runs), one of 1,000 players, one call in three a success.

dofile(debug.getinfo(1, "S").source:match("^@(.*/)") .. "common.lua")

local PATH = "/bridge/dify/challenge-evaluator"
local PLAYERS = 1000
local BODY = '{"challenge_id":"%s","output":"%s","user":"bench-player-%d",'
  .. '"workflow_run_id":"%s-%d-%d","tokens_total":%d,"elapsed_ms":%d}'

function init(args)
  key, challenge_id, run_prefix = args[1], args[2], args[3]
  bench_start(tonumber(args[4]))
  counter = 0
  -- Spread the threads over the players instead of all starting at player 0.
  offset = id * 997
end

function request()
  counter = counter + 1
  local n = offset + counter
  local output = (n % 3 == 0) and "Fine, fine: open sesame." or "No way."
  local body = string.format(
    BODY, challenge_id, output, n % PLAYERS, run_prefix, id, counter, 40 + n % 50, 300 + n % 700
  )
  bench_sent()
  return wrk.format("POST", PATH, {
    ["Authorization"] = "Bearer " .. key,
    ["Content-Type"] = "application/json",
  }, body)
end
