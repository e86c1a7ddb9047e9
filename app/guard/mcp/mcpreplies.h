#pragma once

#include <QString>

#include <nlohmann/json.hpp>

#include <string>

// The guard's own words on the wire, shared by its routing (mcpguard.cpp), the calls it judges
// (mcpguard_calls.cpp) and its side of the inner server (mcpguard_inner.cpp).
namespace mcpreply {

// lock_acquire, lock_release and lock_status: the central Leasehold's tools, never the inner's.
bool isLockTool(const std::string &name);
// A tools/call of one of them.
bool isLockCall(const nlohmann::json &message);
// An isError result; `details` (the service's refusal) go in _meta.leasehold.
nlohmann::json toolError(const nlohmann::json &id, const QString &text,
                         nlohmann::json details = {});
nlohmann::json rpcError(const nlohmann::json &id, int code, const QString &text);

} // namespace mcpreply
