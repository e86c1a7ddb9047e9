#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace leasehold {

// Tunables of the lease engine. Defaults are the product's documented defaults.
struct EngineConfig
{
    std::int64_t minTtlMs = 1'000;
    std::int64_t maxTtlMs = 3'600'000;
    std::int64_t defaultTtlMs = 30'000; // the coordination surface; lock_* tools pass 300 s
    std::int64_t maxWaitMs = 90'000;    // bounded waits are capped here
    std::int64_t pinBoundMs = 60'000;   // a pin never unpinned is dropped after this
    std::int64_t minWantMs = 5'000;     // a refused agent is a "want" for max(2·waitMs, this)
    // Lock-delay by default (a request's lockDelayMs overrides it): named resources (lock:...,
    // every scheme but fs:) and workspace paths. Capped at maxLockDelayMs.
    std::int64_t lockDelayMs = 0;
    std::int64_t workspaceLockDelayMs = 0;
    std::int64_t maxLockDelayMs = 60'000;

    double trustMin = -100.0;
    double trustMax = 100.0;
    double releaseReward = 0.5;
    double expiryPenalty = 5.0;

    // Globs of resources that are not safe to read concurrently (see ExclusivePatterns).
    std::vector<std::string> exclusivePatterns;
};

} // namespace leasehold
