#pragma once

// The one place engine values become JSON, shared by REST and MCP.

#include "leasetypes.h"
#include "ledgerjson.h"
#include "snapshot.h"

#include <nlohmann/json.hpp>

namespace leasehold {

nlohmann::json toJson(const LeaseInfo &lease);
nlohmann::json toJson(const Refusal &refusal);
nlohmann::json toJson(const PinInfo &pin);
nlohmann::json toJson(const WaiterInfo &waiter);
nlohmann::json toJson(const DeadlockPair &pair);
nlohmann::json toJson(const WaitView &view);
nlohmann::json toJson(const AgentView &view);
nlohmann::json toJson(const Snapshot &snapshot);

// A JSON array of toJson(item) for each item.
template<class T> nlohmann::json toJsonArray(const std::vector<T> &items)
{
    nlohmann::json out = nlohmann::json::array();
    for (const T &item : items)
        out.push_back(toJson(item));
    return out;
}

// Seconds a refused client should wait before retrying (Retry-After), rounded up, at least 1.
int retryAfterSeconds(const Refusal &refusal);
// What Retry-After says while the store cannot record grants: about one writer back-off cycle.
constexpr int kStoreRetryAfterSeconds = 2;

} // namespace leasehold
