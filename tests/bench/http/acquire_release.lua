-- wrk script: alternating acquire and bare release over keep-alive connections, each thread
-- acting as its own set of agents on its own resources (open mode).
local counter = 0
local thread_id = 0

function setup(thread)
  thread_id = thread_id + 1
  thread:set("tid", thread_id)
end

function request()
  counter = counter + 1
  local agent = "did:agent:bench-" .. tostring(tid) .. "-" .. tostring(counter % 64)
  local path, body
  if counter % 2 == 1 then
    path = "/api/v1/acp/coordination/lease"
    body = '{"resource":"lock:bench/' .. tostring(tid) .. '/' .. tostring(counter % 64) ..
           '","actorDid":"' .. agent .. '","ttlMs":5000}'
  else
    path = "/api/v1/acp/coordination/release"
    body = '{"actorDid":"' .. agent .. '"}'
  end
  return wrk.format("POST", path, {["Content-Type"] = "application/json"}, body)
end

done = function(summary, latency, requests)
  io.write(string.format("requests/s %.0f  p50 %.2f ms  p99 %.2f ms  non-2xx %d\n",
    summary.requests / (summary.duration / 1e6), latency:percentile(50) / 1000,
    latency:percentile(99) / 1000, summary.errors.status))
end
