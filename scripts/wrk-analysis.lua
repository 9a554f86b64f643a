-- wrk script: POST /v1/analysis with a JSON body.
-- The body comes from the environment (KIBITZ_BENCH_BODY) or defaults to a depth-8 analysis of the
-- checkers start position, which the benchmark puts in the cache first.
wrk.method = "POST"
wrk.body = os.getenv("KIBITZ_BENCH_BODY") or '{"game":"checkers","depth":8}'
wrk.headers["Content-Type"] = "application/json"

-- Count answers that are not 200 (a cached benchmark must not measure errors).
local bad = 0
function response(status, headers, body)
  if status ~= 200 then
    bad = bad + 1
    if bad == 1 then
      io.stderr:write("unexpected status " .. status .. ": " .. body .. "\n")
    end
  end
end
