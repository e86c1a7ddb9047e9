#pragma once

// Reading acquire and release requests from JSON, shared by the REST routes and the MCP tools
// so that both surfaces accept the same fields with the same limits and the same messages.

#include "leasetypes.h"
#include "resourcename.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace leasehold {

constexpr std::size_t kMaxResourcesPerCall = 64;
constexpr std::size_t kMaxNameBytes = 1024;
constexpr std::int64_t kMaxDurationInput = std::int64_t(1) << 40;
// How long a coordination acquire (REST /lease, MCP coordination_lease_acquire) may wait: never
// above the surface's default TTL, so a waiter cannot outlast what it waits for by default.
constexpr std::int64_t kCoordinationWaitCapMs = 30'000;
// The longest lock-delay a request may ask for (the engine caps it at maxLockDelayMs too).
constexpr std::int64_t kMaxLockDelayInput = 60'000;

struct ReleaseRequest
{
    std::vector<ResourceName> resources; // empty: everything the agent holds
    std::string leaseId;
};

// Parses each text as a resource name; on failure names the element ("paths[2] escapes the
// workspace root") and returns nothing.
std::optional<std::vector<ResourceName>> parseNames(const ResourceParser &parser,
                                                    const std::vector<std::string> &texts,
                                                    const std::string &field, std::string *error);

// {resource | resources[], mode?, ttlMs?, waitMs?}; waitMs is capped at kCoordinationWaitCapMs.
std::variant<AcquireRequest, std::string>
readAcquire(const nlohmann::json &body, const ResourceParser &parser, std::string actor);

// {resource? | resources?[], leaseId?}
std::variant<ReleaseRequest, std::string> readRelease(const nlohmann::json &body,
                                                      const ResourceParser &parser);

} // namespace leasehold
