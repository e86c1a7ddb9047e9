#pragma once

#include "leasetypes.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace leasehold {

struct WaiterInfo
{
    std::string actorDid;
    std::string resource;
    Mode mode = Mode::Write;
    bool parked = false; // true: parked in a bounded wait; false: a recent refusal (a want)
    TimeMs since = 0;
    TimeMs deadline = 0;
    std::string holder; // who it waits for now (empty when nobody holds it)
    std::uint64_t waitId = 0;
};

// A live cycle of waits, of any length: each step's agent waits for its resource, which the
// next step's agent holds (the last step's is held by the first). It starts at the smallest
// DID, so the same cycle reads the same in every snapshot.
struct DeadlockCycle
{
    std::vector<CycleStep> steps;
};

struct WaitView
{
    std::vector<WaiterInfo> waiters;
    std::vector<DeadlockCycle> deadlocks;
};

struct TrustInfo
{
    std::string actorDid;
    double score = 0;
    std::uint64_t releases = 0;
    std::uint64_t expiries = 0;
};

struct AgentInfo
{
    std::string actorDid;
    TimeMs lastSeen = 0;
    int liveSessions = 0;
    ViaSet via = 0; // the surfaces it is live on (MCP, REST, guard, hook, git)
    bool suspended = false;
    int leases = 0;
    int waits = 0;
    double trust = 0;
};

struct Counters
{
    std::uint64_t grants = 0;
    std::uint64_t releases = 0;
    std::uint64_t expiries = 0;
    std::uint64_t adminReleases = 0;
    std::array<std::uint64_t, 7> refusals{}; // indexed by RefusalReason
    std::uint64_t waitsBegun = 0;
    std::uint64_t waitsGranted = 0;
    std::uint64_t waitsTimedOut = 0;
    std::uint64_t waitsCancelled = 0;
    std::uint64_t pinsDropped = 0;
    std::uint64_t events = 0;
    std::uint64_t refusalsTotal() const
    {
        std::uint64_t n = 0;
        for (auto r : refusals)
            n += r;
        return n;
    }
};

// Everything an operator sees, from one moment.
struct Snapshot
{
    TimeMs at = 0;
    bool paused = false;
    std::uint64_t nextToken = 0;
    std::uint64_t lastSeq = 0; // the newest ledger event's sequence number
    std::vector<LeaseInfo> leases;
    std::vector<WaiterInfo> waiters;
    std::vector<DeadlockCycle> deadlocks;
    std::vector<PinInfo> pins;
    std::vector<TrustInfo> trust;
    std::vector<AgentInfo> agents;
    std::vector<ReleaseRequestInfo> releaseRequests; // open ones, oldest first
    Counters counters;
};

// What persists of an agent across restarts.
struct AgentState
{
    std::string actorDid;
    double trust = 0;
    std::uint64_t releases = 0;
    std::uint64_t expiries = 0;
    bool suspended = false;
};

// One agent's own view: what it holds and what it is waiting for (parked or recently refused),
// each with whoever holds that resource now.
struct AgentView
{
    std::string actorDid;
    TimeMs at = 0; // when it was taken
    double trust = 0;
    bool suspended = false;
    std::vector<LeaseInfo> held;
    std::vector<WaiterInfo> waiting;
    std::vector<ReleaseRequestInfo> releaseRequests; // open against its leases, oldest first
};

} // namespace leasehold
