-- Reads of one challenge's board (the top 10).
--   wrk -t C -c C -d S+G -s reads.lua URL -- CHALLENGE_ID SECONDS [conditional]
-- Plain 200 reads by default; with "conditional" each thread sends back the last ETag it
-- got as If-None-Match, so an unchanged board answers 304.

dofile(debug.getinfo(1, "S").source:match("^@(.*/)") .. "common.lua")

function init(args)
  path = "/web/api/challenges/" .. args[1] .. "/leaderboard?limit=10"
  bench_start(tonumber(args[2]))
  conditional = args[3] == "conditional"
  etag = nil
end

function request()
  local headers = {}
  if etag then
    headers["If-None-Match"] = etag
  end
  bench_sent()
  return wrk.format("GET", path, headers)
end

function bench_on_response(status, headers, body)
  if conditional then
    etag = headers["ETag"] or headers["etag"] or headers["Etag"] or etag
  end
end
