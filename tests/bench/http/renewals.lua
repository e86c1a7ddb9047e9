-- wrk script: renewals, labelled as such. Each agent takes one lease on its first request and
-- then renews it (POST /renew with its leaseId) on every request after; no lease is granted or
-- given back after the first. What a fleet of agents that keep their claims alive costs,
-- beside the cycles of cycles.lua. Per thread, agents and resources of its own (open mode).
local threads = {}
local headers = {["Content-Type"] = "application/json"}
local agentsPerThread = 64

function setup(thread)
  table.insert(threads, thread)
  thread:set("tid", #threads)
end

function init(args)
  counter = 0
  leases = {}          -- agent index -> leaseId, once granted
  asked = {}           -- agent index -> a first acquire is under way
  grants, renewals, failed = 0, 0, 0
end

local function agentOf(i) return "did:agent:renew-" .. tid .. "-" .. i end
local function resourceOf(i) return "lock:renew/" .. tid .. "/" .. i end

function request()
  counter = counter + 1
  local i = counter % agentsPerThread
  local id = leases[i]
  if id == nil then
    if asked[i] then -- its lease is still on the way: let another agent go first
      for j = 0, agentsPerThread - 1 do
        if leases[j] ~= nil then i, id = j, leases[j] break end
      end
    end
  end
  if id == nil then
    asked[i] = true
    return wrk.format("POST", "/api/v1/acp/coordination/lease", headers,
      '{"resource":"' .. resourceOf(i) .. '","actorDid":"' .. agentOf(i) .. '","ttlMs":30000}')
  end
  return wrk.format("POST", "/api/v1/acp/coordination/renew", headers,
    '{"resource":"' .. resourceOf(i) .. '","actorDid":"' .. agentOf(i) .. '","leaseId":"' ..
    id .. '","ttlMs":30000}')
end

function response(status, headers, body)
  if status ~= 200 then
    failed = failed + 1
    return
  end
  local holder = string.match(body, '"holder":"did:agent:renew%-%d+%-(%d+)"')
  local leaseId = string.match(body, '"leaseId":"([^"]+)"')
  if holder == nil or leaseId == nil then
    failed = failed + 1
    return
  end
  local i = tonumber(holder)
  if leases[i] == nil then
    grants = grants + 1
    leases[i] = leaseId
  else
    renewals = renewals + 1
  end
end

done = function(summary, latency, requests)
  local g, r, f = 0, 0, 0
  for _, t in ipairs(threads) do
    g = g + t:get("grants")
    r = r + t:get("renewals")
    f = f + t:get("failed")
  end
  io.write(string.format("renewals: %d grants, %d renewals, %d failed of %d requests\n",
    g, r, f, summary.requests))
  io.write(string.format("requests/s %.0f  p50 %.2f ms  p99 %.2f ms  non-2xx %d\n",
    summary.requests / (summary.duration / 1e6), latency:percentile(50) / 1000,
    latency:percentile(99) / 1000, summary.errors.status))
end
