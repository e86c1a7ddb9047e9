#pragma once

// A deliberately simple reference model of the lease engine: vectors and linear scans, no
// trie, no heap, no indexes. tst_leasemodel drives it and the real engine with the same random
// operations and compares them after every step.

#include "exclusivepatterns.h"
#include "leasetypes.h"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace leasehold::test {

struct MLease
{
    std::string id;
    ResourceName resource;
    std::string agent;
    Mode mode = Mode::Write;
    bool exclusive = true;
    std::uint64_t token = 0;
    TimeMs grantedAt = 0;
    TimeMs expiresAt = 0;
    std::int64_t ttl = 0;
    int pins = 0;
    int pending = -1; // -1 none, else 0 release, 1 expiry, 2 admin
};

struct MWaiter
{
    std::uint64_t id = 0;
    std::string agent;
    std::vector<ResourceName> resources;
    std::vector<bool> exclusive;
    Mode mode = Mode::Write;
    std::int64_t ttl = 0;
    TimeMs since = 0;
    TimeMs deadline = 0;
};

struct MWant
{
    ResourceName resource;
    bool exclusive = true;
    TimeMs deadline = 0;
};

struct MPin
{
    std::string id;
    std::string leaseId;
    TimeMs deadline = 0;
};

// What the model expects of one call.
struct MOutcome
{
    enum Kind { Granted, Refused, Parked } kind = Granted;
    RefusalReason reason = RefusalReason::LeaseHeld;
    std::set<std::string> possibleHolders; // any of these may be named
    std::string resource;
    int stampedeWaiters = -1;
};

// An ended wait, as the model expects it.
struct MWaitEnd
{
    std::uint64_t id = 0;
    bool granted = false;
    RefusalReason reason = RefusalReason::LeaseHeld;
};

class LeaseModel
{
public:
    explicit LeaseModel(std::vector<std::string> exclusivePatterns)
        : m_patterns(exclusivePatterns)
    {}

    MOutcome acquire(TimeMs now, const std::string &agent, std::vector<ResourceName> resources,
                     Mode mode, std::optional<std::int64_t> ttl, std::int64_t waitMs,
                     std::uint64_t waitId, bool waitWhileHolding = false);
    // Names leases the model created with the ids the engine chose; returns false when a lease
    // the model already knew under one id now has another (ids must be stable).
    bool syncIds(const std::map<std::uint64_t, std::string> &idsByToken);
    MOutcome release(TimeMs now, const std::string &agent, std::vector<ResourceName> resources,
                     const std::string &leaseId);
    MOutcome renew(TimeMs now, const std::string &agent, const ResourceName &resource,
                   const std::string &leaseId, std::optional<std::int64_t> ttl);
    MOutcome pin(TimeMs now, const std::string &agent, const std::string &leaseId,
                 const std::string &newPinId);
    MOutcome unpin(TimeMs now, const std::string &agent, const std::string &pinId);
    void cancelWait(TimeMs now, std::uint64_t id);
    int releaseHolder(TimeMs now, const std::string &did);
    int releaseAll(TimeMs now);
    bool releaseLease(TimeMs now, const std::string &id);
    void suspend(TimeMs now, const std::string &did, bool on);
    void pause(TimeMs now, bool on);
    void expireDue(TimeMs now);

    std::vector<MWaitEnd> takeWaitEnds() { return std::exchange(m_waitEnds, {}); }

    const std::vector<MLease> &leases() const { return m_leases; }
    const std::vector<MWaiter> &parked() const { return m_parked; }
    const std::map<std::pair<std::string, std::string>, MWant> &wants() const { return m_wants; }
    const std::map<std::string, MPin> &pins() const { return m_pins; }
    double trust(const std::string &did) const;
    std::uint64_t nextToken() const { return m_nextToken; }

private:
    bool leaseConflicts(const MLease &l, const ResourceName &r, bool excl,
                        const std::string &agent) const;
    // (index, holders) of the first contended resource, or index -1.
    std::pair<int, std::set<std::string>> contention(const std::string &agent,
                                                     const std::vector<ResourceName> &res,
                                                     const std::vector<bool> &excl,
                                                     std::size_t beforeParked) const;
    std::set<std::string> edges(const std::string &agent) const;
    bool closesCycle(const std::string &agent, const std::vector<ResourceName> &res,
                     const std::vector<bool> &excl) const;
    void commit(TimeMs now, const std::string &agent, const std::vector<ResourceName> &res,
                const std::vector<bool> &excl, Mode mode, std::int64_t ttl);
    void endLease(std::size_t index, int cause);
    bool endById(const std::string &id); // an admin end, without waking the queue
    void finish(std::size_t index);
    bool wake(TimeMs now); // true when it granted anything
    int stampedeWaiters(const std::string &agent, const ResourceName &r) const;
    void recordWant(TimeMs now, const std::string &agent, const ResourceName &r, bool excl,
                    int waiters);
    void dropWants(const std::string &agent);
    bool holdsAny(const std::string &agent) const;

    ExclusivePatterns m_patterns;
    std::vector<MLease> m_leases;  // grant order
    std::vector<MWaiter> m_parked; // ticket order
    std::map<std::pair<std::string, std::string>, MWant> m_wants;
    std::map<std::string, MPin> m_pins;
    std::map<std::string, double> m_trust;
    std::set<std::string> m_suspended;
    std::vector<MWaitEnd> m_waitEnds;
    std::uint64_t m_nextToken = 1;
    bool m_paused = false;
};

} // namespace leasehold::test
