#pragma once

#include "clock.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

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
};

// "coordination.lease.granted", "coordination.lease.admin.release_all", ...
std::string_view eventKindName(EventKind kind);
// The kind named `name`, or nothing.
std::optional<EventKind> eventKindFromName(std::string_view name);

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
    std::string reason; // refusal reason, end cause ("release", "admin", "expired_while_pinned")
    std::string detail; // short "key=value key=value" text
};

// The value of `key` in an event's "key=value key=value" detail, or empty.
std::string detailValue(std::string_view detail, std::string_view key);

// Which ledger events a reader wants; empty fields match everything. `resource` matches that
// resource and everything below it.
struct LedgerFilter
{
    std::string actor;
    std::string resource; // canonical
    std::string kind;     // as eventKindName spells it

    bool matches(const LedgerEvent &e) const
    {
        if (!actor.empty() && e.actorDid != actor)
            return false;
        if (!kind.empty() && eventKindName(e.kind) != kind)
            return false;
        if (resource.empty() || e.resource == resource)
            return true;
        return e.resource.size() > resource.size() &&
               e.resource.compare(0, resource.size(), resource) == 0 &&
               e.resource[resource.size()] == '/';
    }
};

} // namespace leasehold
