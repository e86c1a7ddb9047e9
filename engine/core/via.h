#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace leasehold {

// How an agent reaches the service. An agent may be live on several at once, so the agents view
// keeps a set of them (a bit mask of these values).
enum class Via : std::uint8_t {
    Mcp = 1,   // an MCP session at /mcp
    Rest = 2,  // the REST API, directly
    Guard = 4, // `leasehold guard mcp` in front of the agent's own MCP servers
    Hook = 8,  // a coding agent's hook (`leasehold hook claude-code`)
    Git = 16,  // `leasehold guard git` (pre-commit, pre-push)
    Fs = 32,   // the filesystem gate (`leasehold run`, `leasehold guard fs`)
};
using ViaSet = std::uint8_t;
inline constexpr int kViaCount = 6;

// "mcp", "rest", "guard", "hook", "git", "fs".
std::string_view viaName(Via via);
std::optional<Via> viaFromName(std::string_view name);
// The members of the set, in the enum's order.
std::vector<Via> viaMembers(ViaSet set);
// The set as "mcp, guard" (in the enum's order); empty for none.
std::string viaList(ViaSet set);

} // namespace leasehold
