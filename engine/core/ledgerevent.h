#pragma once

#include "clock.h"
#include "leasetypes.h"
#include "mode.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace leasehold {

enum class EventKind {
    Granted,
    Refused,
    Released,
    Expired,
    Pinned,
    Unpinned,
    AdminReleaseHolder,
    AdminReleaseAll,
    AdminReleaseLease,
    AdminSuspend,
    AdminPause,
    WorkspaceMutation, // a guarded workspace tool changed a file or folder
    ReleaseRequestRaised,
    ReleaseRequestDeclined,
    ReleaseRequestOverdue,
};

// Whether `kind` is one of the release request's events (they carry requestId and its facts).
inline bool isReleaseRequestEvent(EventKind kind)
{
    return kind == EventKind::ReleaseRequestRaised || kind == EventKind::ReleaseRequestDeclined ||
           kind == EventKind::ReleaseRequestOverdue;
}

// "coordination.lease.granted", "coordination.lease.admin.release_all", ...
std::string_view eventKindName(EventKind kind);
// The kind named `name`, or nothing.
std::optional<EventKind> eventKindFromName(std::string_view name);

// What an event says beyond who, what and when, as typed values. Each field belongs to the
// kinds named beside it and keeps its default in every other kind; the JSON, CSV, `ctl` and the
// console render them, and nothing ever reads them back out of text.
struct EventFacts
{
    std::string op;               // refused: the call refused ("acquire", "release", "renew", ...)
    Mode mode = Mode::Write;      // granted, refused (acquire): the mode asked for
    std::int64_t waitedMs = -1;   // granted, refused: how long a parked wait lasted (-1: none)
    std::string holder;           // refused: who holds (or queues for) what was asked;
                                  // release request: the holder asked to let go
    std::vector<CycleStep> cycle; // refused as deadlock: the requester first
    std::string by;               // released (admin): the operator whose lever ended it
    bool whileDown = false;       // expired: fell due while the service was down
    std::string target;           // admin release_holder, suspend: the agent acted on
    std::int64_t released = -1;   // admin release_*: how many leases the lever ended
    bool suspended = false;       // admin suspend: the agent is suspended now (false: lifted)
    bool paused = false;          // admin pause: admissions are paused now (false: resumed)
    std::string pinId;            // pinned, unpinned, refused (unpin)
    std::string before;           // workspace mutation: the revision before ("" absent)
    std::string after;            // workspace mutation: the revision after ("" absent)
    std::string to;               // workspace mutation (fs_move): where it went
    std::string via;              // refused at a guard's check: the guard ("fs", "hook", ...)
    std::int64_t pid = -1;        // refused at the filesystem gate: the process that tried
    std::string command;          // and its command name
    std::int64_t heldBackMs = 0;  // expired, released (admin): the name is held back this long
    std::string requestId;        // release request (all three): the request
    std::string urgency;          // and its urgency ("low", "normal", "high")
    TimeMs deadlineAt = 0;        // and when it falls overdue (0: no deadline)
    std::string requester;        // and who asked (an agent waiting, or an operator)

    friend bool operator==(const EventFacts &, const EventFacts &) = default;
};

// One decision, as the ledger records it. seq is engine-wide and strictly increasing.
struct LedgerEvent
{
    std::uint64_t seq = 0;
    TimeMs at = 0;
    EventKind kind = EventKind::Granted;
    std::string actorDid; // the agent, or the operator for admin actions
    std::string resource;
    std::string leaseId;
    std::uint64_t token = 0;
    std::int64_t ttlMs = 0; // granted: the lease's ttl
    std::string reason;     // refusal reason, end cause ("release", "admin", ...), mutation's tool,
                            // a release request's reason (raised, overdue) or its decline's
    EventFacts facts;

    friend bool operator==(const LedgerEvent &, const LedgerEvent &) = default;
};

// Whether `e`'s facts.mode means anything: grants and refused acquires carry one.
inline bool carriesMode(const LedgerEvent &e)
{
    return e.kind == EventKind::Granted ||
           (e.kind == EventKind::Refused && e.facts.op == "acquire");
}

// Which ledger events a reader wants; empty fields match everything. `resource` matches that
// resource and everything below it.
struct LedgerFilter
{
    std::string actor;
    std::string resource; // canonical
    std::string kind;     // as eventKindName spells it
    TimeMs fromAt = 0;    // events at or after this time (0: any time)

    bool matches(const LedgerEvent &e) const
    {
        if (!actor.empty() && e.actorDid != actor)
            return false;
        if (e.at < fromAt)
            return false;
        if (!kind.empty() && eventKindName(e.kind) != kind)
            return false;
        if (resource.empty() || e.resource == resource)
            return true;
        return e.resource.size() > resource.size() &&
               e.resource.compare(0, resource.size(), resource) == 0 &&
               e.resource[resource.size()] == '/';
    }
    friend bool operator==(const LedgerFilter &, const LedgerFilter &) = default;
};

} // namespace leasehold
