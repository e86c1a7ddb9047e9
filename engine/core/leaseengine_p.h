#pragma once

// Private parts of LeaseEngine shared by its implementation files.

#include "leaseengine.h"

#include <limits>

namespace leasehold {

constexpr std::uint64_t kAnyTicket = std::numeric_limits<std::uint64_t>::max();

struct LeaseEngine::Request
{
    AgentRecord *agent = nullptr;
    std::vector<ResourceName> resources;
    std::vector<bool> exclusive;
    Mode mode = Mode::Write;
    std::int64_t ttlMs = 0;
    std::int64_t lockDelayMs = -1; // -1: the configured default for each name's scheme
};

struct LeaseEngine::Contention
{
    std::size_t index = 0;
    const LeaseRecord *lease = nullptr; // a conflicting lease, or
    const Waiter *waiter = nullptr;     // an earlier parked waiter queued ahead
};

} // namespace leasehold
