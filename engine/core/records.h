#pragma once

// The engine's internal bookkeeping. Nothing outside engine/core sees these: queries return
// the plain structs of snapshot.h and leasetypes.h instead.

#include "deadlinequeue.h"
#include "leasetypes.h"

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace leasehold {

struct AgentRecord;
struct TrieNode;
struct Waiter;

// Why a lease ends; decides the trust effect and the ledger kind.
enum class EndCause {
    Release,   // the holder let go: trust +releaseReward
    Expiry,    // the engine's alarm took it back: trust -expiryPenalty
    Admin,     // an operator released it: no trust effect
    Abandoned, // granted to a caller that had gone before hearing of it: no trust effect
    StoreLost, // granted, but the store could not make it durable in time: no trust effect
};

struct LeaseRecord : Timed
{
    LeaseRecord()
        : Timed(TimerKind::LeaseExpiry)
    {}
    std::string leaseId;
    ResourceName resource;
    AgentRecord *agent = nullptr;
    Mode mode = Mode::Write;
    bool exclusive = true;
    std::uint64_t token = 0;
    TimeMs grantedAt = 0;
    TimeMs expiresAt = 0;
    std::int64_t ttlMs = 0;
    int pins = 0;
    std::optional<EndCause> pending; // ends when the last pin does
    std::string pendingBy;           // operator of a pending admin release
    // Lock-delay: how long the name is held back after this lease ends without its holder
    // releasing it (expiry, an operator), and, once it has, until when: the record then stays
    // in the trie alone (no longer its holder's, no longer a lease) so nobody is granted it.
    std::int64_t lockDelayMs = 0;
    TimeMs heldBackUntil = 0;
    TrieNode *node = nullptr;
    std::size_t nodeSlot = 0;  // index in node->leases
    std::size_t agentSlot = 0; // index in agent->held
};

struct PinRecord : Timed
{
    PinRecord()
        : Timed(TimerKind::PinBound)
    {}
    std::string pinId;
    LeaseRecord *lease = nullptr;
    TimeMs since = 0;
};

// A recent refusal: the agent still wants the resource, so it shows in the queue and takes part
// in deadlock detection until it lapses.
struct WantRecord : Timed
{
    WantRecord()
        : Timed(TimerKind::WantLapse)
    {}
    AgentRecord *agent = nullptr;
    ResourceName resource;
    Mode mode = Mode::Write;
    bool exclusive = true;
    TimeMs since = 0;
    TrieNode *node = nullptr;
    std::size_t nodeSlot = 0;
};

// A parked request: one entry per resource, each queued at its trie node in ticket order.
struct Waiter : Timed
{
    Waiter()
        : Timed(TimerKind::WaitDeadline)
    {}
    std::uint64_t id = 0;
    std::uint64_t ticket = 0; // arrival order; lower is earlier
    AgentRecord *agent = nullptr;
    std::vector<ResourceName> resources;
    std::vector<bool> exclusive;
    std::vector<TrieNode *> nodes;
    Mode mode = Mode::Write;
    std::int64_t ttlMs = 0;
    std::int64_t lockDelayMs = -1; // asked for; -1: the configured default
    TimeMs since = 0;
};

struct AgentRecord
{
    std::string did;
    double trust = 0;
    std::uint64_t releases = 0;
    std::uint64_t expiries = 0;
    bool suspended = false;
    TimeMs lastSeen = 0;
    int liveSessions = 0;
    ViaSet via = 0; // the surfaces it is live on
    std::vector<LeaseRecord *> held;
    std::vector<Waiter *> parked;
    std::unordered_map<std::string, WantRecord *> wants; // by canonical resource
    mutable std::uint64_t searchMark = 0; // WaitGraph: visited in search number searchMark
};

} // namespace leasehold
