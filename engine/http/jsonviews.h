#pragma once

// Engine values as JSON trees, shared by REST and MCP. (REST's grant and release answers, the
// hottest, are written straight into bytes by leasereplies.h; its test holds them byte-equal to
// these trees.)

#include "leasetypes.h"
#include "ledgerjson.h"
#include "refusals.h"
#include "snapshot.h"

#include <nlohmann/json.hpp>

namespace leasehold {

nlohmann::json toJson(const LeaseInfo &lease);
nlohmann::json toJson(const CycleStep &step);
// A refusal with its sentence in the words of `steps`, its retry hint and what it names.
nlohmann::json toJson(const Refusal &refusal, const NextSteps &steps = restSteps());
nlohmann::json toJson(const PinInfo &pin);
nlohmann::json toJson(const WaiterInfo &waiter);
nlohmann::json toJson(const DeadlockCycle &cycle);
nlohmann::json toJson(const WaitView &view);
nlohmann::json toJson(const AgentView &view);
// A release request as every surface shows it; `now` gives its age (ageMs).
nlohmann::json toJson(const ReleaseRequestInfo &request, TimeMs now);
nlohmann::json toJson(const std::vector<ReleaseRequestInfo> &requests, TimeMs now);
nlohmann::json toJson(const Snapshot &snapshot);

// A JSON array of toJson(item) for each item.
template<class T> nlohmann::json toJsonArray(const std::vector<T> &items)
{
    nlohmann::json out = nlohmann::json::array();
    for (const T &item : items)
        out.push_back(toJson(item));
    return out;
}

} // namespace leasehold
