-- wrk script: POST /v1/analysis, each request a different position (one JSON body per line of the file named
-- by KIBITZ_BENCH_BODIES), so no request is answered from the cache or shares another's search.
local bodies = {}
local path = os.getenv("KIBITZ_BENCH_BODIES")
local file = assert(io.open(path, "r"), "KIBITZ_BENCH_BODIES must name a file of request bodies")
for line in file:lines() do
  if #line > 0 then bodies[#bodies + 1] = line end
end
file:close()

local threads = 0
function setup(thread)
  thread:set("offset", threads * 7919)
  threads = threads + 1
end

local i = 0
function request()
  i = i + 1
  local body = bodies[((offset or 0) + i) % #bodies + 1]
  return wrk.format("POST", "/v1/analysis", { ["Content-Type"] = "application/json" }, body)
end

function response(status, headers, body)
  if status ~= 200 then
    io.stderr:write("unexpected status " .. status .. ": " .. body .. "\n")
  end
end
