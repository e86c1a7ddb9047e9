#pragma once

#include "clock.h"
#include "mode.h"
#include "resourcename.h"
#include "via.h"

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace leasehold {

// One granted lease, as every surface shows it.
struct LeaseInfo
{
    std::string leaseId;
    std::string resource; // canonical name
    std::string holder;   // actorDid
    Mode mode = Mode::Write;
    std::uint64_t token = 0;
    TimeMs grantedAt = 0;
    TimeMs expiresAt = 0;
    std::int64_t ttlMs = 0;
    int pins = 0;
    bool pendingRelease = false;  // released or expired while pinned; ends with the last pin
    bool extended = false;        // this grant extended a lease the agent already held
    std::int64_t lockDelayMs = 0; // held back this long if it ends without a release
};

enum class RefusalReason {
    LeaseHeld,
    Deadlock,
    StaleLease,
    NotHeld,
    Suspended,
    Paused,
    StoreUnavailable, // the store cannot make a grant durable now: nothing new is granted
};

std::string_view refusalName(RefusalReason reason);
std::optional<RefusalReason> refusalFromName(std::string_view name);

// One step of a wait cycle: `agent` waits for `resource`, which the next step's agent holds
// (the last step's is held by the first).
struct CycleStep
{
    std::string agent;
    std::string resource;

    friend bool operator==(const CycleStep &, const CycleStep &) = default;
};

// The back-off a lease_held refusal carries: waitMs = min(800, 25·2^waiters).
struct Stampede
{
    int waiters = 0;
    int admitted = 0;
    std::int64_t waitMs = 0;
};

// An expected "no". Refusals are values, never exceptions, never errors in a log, and never
// prose: the edges word them (engine/host/refusals.h).
struct Refusal
{
    RefusalReason reason = RefusalReason::LeaseHeld;
    std::string resource;     // the (first) resource concerned
    std::string holder;       // who holds it now (lease_held, deadlock)
    std::string leaseId;      // the holder's lease; stale_lease, not_held: the lease asked about
    std::string pinId;        // stale_lease, not_held on unpin: the pin asked about
    std::string heldResource; // what the holder holds or queues for (may be above or below it)
    std::int64_t heldForMs = 0;
    std::int64_t expiresInMs = 0;
    // The lease in the way ended without a release and its name is held back this much longer
    // (lock-delay); 0 otherwise.
    std::int64_t heldBackMs = 0;
    std::optional<Stampede> stampede;
    std::string waitingOn;        // deadlock: the resource the holder itself waits for
    std::vector<CycleStep> cycle; // deadlock: every step, starting at the requester
    bool queued = false;          // blocked by an earlier waiter, not by a lease
    bool holdAndWait = false;     // refused at once because the requester holds leases
    bool whileParked = false;     // paused, suspended: it ended a parked wait
    std::int64_t waitedMs = -1;   // set when a bounded wait ended without a grant
    bool cancelled = false;       // the wait was cancelled (client gone)
    std::string problem;          // store_unavailable: what the store reported
};

struct Grant
{
    std::vector<LeaseInfo> leases;
    std::int64_t waitedMs = 0;
};

// A request that waits: the engine answers later through EngineListener::onWaitEnded.
struct Parked
{
    std::uint64_t waitId = 0;
    TimeMs deadline = 0;
};

// A holder the stale-holder sweep found: when it was last seen and what it held.
struct SweepFinding
{
    std::string actorDid;
    TimeMs lastSeen = 0;
    std::int64_t idleMs = 0;
    std::vector<std::string> resources;
    int released = 0;
};

struct AcquireRequest
{
    std::string actor;
    std::vector<ResourceName> resources;
    Mode mode = Mode::Write;
    std::optional<std::int64_t> ttlMs; // clamped to [minTtlMs, maxTtlMs]; default when absent
    std::int64_t waitMs = 0;           // > 0 parks (capped at maxWaitMs)
    // Parks even while the agent holds other leases (a hook waiting for one more file), instead
    // of the no-hold-and-wait refusal. Deadlock detection applies to it as to every wait.
    bool waitWhileHolding = false;
    // Lock-delay for the leases granted: how long each name is held back from everyone after
    // the lease ends without its holder releasing it. Absent: the configured default.
    std::optional<std::int64_t> lockDelayMs = std::nullopt;
};

using AcquireResult = std::variant<Grant, Refusal, Parked>;

struct Released
{
    std::vector<LeaseInfo> released; // pendingRelease set for a pinned lease
    double trust = 0;
};

using ReleaseResult = std::variant<Released, Refusal>;
using LeaseResult = std::variant<LeaseInfo, Refusal>;

struct PinInfo
{
    std::string pinId;
    std::string leaseId;
    std::string resource;
    std::string holder;
    TimeMs since = 0;
    TimeMs deadline = 0;
};

using PinResult = std::variant<PinInfo, Refusal>;

// Release requests (leaseengine_releaserequests.cpp): an agent waiting for a resource, or an
// operator, asks its holder to let go. A request never changes who holds what by itself.
enum class Urgency { Low, Normal, High };

std::string_view urgencyName(Urgency urgency);
std::optional<Urgency> urgencyFromName(std::string_view name);

struct ReleaseRequestAsk
{
    std::string requester;
    bool byOperator = false; // an operator may ask about any lease
    // The lease asked about: `leaseId` when not empty, else the lease in the way of `resource`.
    std::optional<ResourceName> resource;
    std::string leaseId;
    std::string reason;
    Urgency urgency = Urgency::Normal;
    std::int64_t deadlineMs = 0; // > 0: overdue this long after it is raised
};

struct ReleaseRequestInfo
{
    std::string requestId;
    std::string leaseId;
    std::string resource;
    std::string holder;
    std::string requester;
    bool byOperator = false;
    Urgency urgency = Urgency::Normal;
    std::string reason;
    TimeMs raisedAt = 0;
    TimeMs deadlineAt = 0; // 0: none
    bool overdue = false;
    bool existing = false; // raise: the requester had already asked this of this lease
};

// Why a release request could not be raised or declined.
enum class RequestError {
    NoBusiness,     // the requester neither waits for nor was refused the resource (403)
    NotHeld,        // nobody holds the resource (409)
    UnknownLease,   // no live lease has that id (404)
    OwnLease,       // the requester holds the lease itself (409)
    UnknownRequest, // no open request has that id (404)
    NotHolder,      // only the holder may decline (403)
};

struct RequestFailure
{
    RequestError error = RequestError::NoBusiness;
    std::string resource;
    std::string holder;
};

using RequestResult = std::variant<ReleaseRequestInfo, RequestFailure>;

} // namespace leasehold
