-- wrk script: real lease cycles. Every acquire asks for a resource its agent does not hold, so
-- each one the service grants is a new lease (a new token); every release gives back one lease
-- it was granted, by leaseId. Each thread is its own set of agents on its own resources (open
-- mode): an agent takes a lease, gives it back, and next time takes the next of its 16
-- resources. wrk's scripts keep no state per connection, so a lease is given back on whichever
-- of the thread's connections asks next; to the service that is the same agent either way.
-- At the end it prints the cycles it saw (grants and releases from the answers' bodies), so a
-- run whose work went wrong says so; tests/bench/http/cycles.py checks the service's own count.
local threads = {}
local headers = {["Content-Type"] = "application/json"}

function setup(thread)
  table.insert(threads, thread)
  thread:set("tid", #threads)
end

function init(args)
  held = {}            -- granted leases to give back, oldest first: {agent, leaseId}
  first, last = 1, 0
  idle = {}            -- agents holding nothing, free to start a cycle
  agents = 0
  cycle = {}           -- per agent: cycles begun (which of its resources comes next)
  grants, releases, failed = 0, 0, 0
end

function request()
  if first <= last then
    local lease = held[first]
    held[first] = nil
    first = first + 1
    return wrk.format("POST", "/api/v1/acp/coordination/release", headers,
      '{"actorDid":"' .. lease[1] .. '","leaseId":"' .. lease[2] .. '"}')
  end
  local agent = table.remove(idle)
  if agent == nil then
    agents = agents + 1
    agent = "did:agent:bench-" .. tid .. "-" .. agents
  end
  local n = (cycle[agent] or 0) + 1
  cycle[agent] = n
  -- lock:bench/<thread>-<agent>/<0..15>
  local resource = "lock:bench/" .. string.sub(agent, 17) .. "/" .. (n % 16)
  return wrk.format("POST", "/api/v1/acp/coordination/lease", headers,
    '{"resource":"' .. resource .. '","actorDid":"' .. agent .. '","ttlMs":5000}')
end

function response(status, headers, body)
  if status ~= 200 then
    failed = failed + 1
    return
  end
  if string.find(body, '"released":', 1, true) then
    local holder = string.match(body, '"holder":"([^"]+)"')
    if holder then
      releases = releases + 1
      table.insert(idle, holder)
    else
      failed = failed + 1 -- released nothing: the cycle went wrong
    end
    return
  end
  local leaseId = string.match(body, '"leaseId":"([^"]+)"')
  local holder = string.match(body, '"holder":"([^"]+)"')
  if leaseId and holder and not string.find(body, '"extended":true', 1, true) then
    grants = grants + 1
    last = last + 1
    held[last] = {holder, leaseId}
  else
    failed = failed + 1
  end
end

done = function(summary, latency, requests)
  local g, r, f = 0, 0, 0
  for _, t in ipairs(threads) do
    g = g + t:get("grants")
    r = r + t:get("releases")
    f = f + t:get("failed")
  end
  io.write(string.format("cycles: %d grants, %d releases, %d failed of %d requests\n",
    g, r, f, summary.requests))
  io.write(string.format("requests/s %.0f  p50 %.2f ms  p99 %.2f ms  non-2xx %d\n",
    summary.requests / (summary.duration / 1e6), latency:percentile(50) / 1000,
    latency:percentile(99) / 1000, summary.errors.status))
end
