#include "leasetypes.h"
#include "ledgerevent.h"

namespace leasehold {

std::string_view refusalName(RefusalReason reason)
{
    switch (reason) {
    case RefusalReason::LeaseHeld:
        return "lease_held";
    case RefusalReason::Deadlock:
        return "deadlock";
    case RefusalReason::StaleLease:
        return "stale_lease";
    case RefusalReason::NotHeld:
        return "not_held";
    case RefusalReason::Suspended:
        return "suspended";
    case RefusalReason::Paused:
        return "paused";
    case RefusalReason::StoreUnavailable:
        return "store_unavailable";
    }
    return "lease_held";
}

std::optional<RefusalReason> refusalFromName(std::string_view name)
{
    for (int r = 0; r <= int(RefusalReason::StoreUnavailable); ++r)
        if (refusalName(RefusalReason(r)) == name)
            return RefusalReason(r);
    return std::nullopt;
}

std::string_view urgencyName(Urgency urgency)
{
    switch (urgency) {
    case Urgency::Low:
        return "low";
    case Urgency::Normal:
        return "normal";
    case Urgency::High:
        return "high";
    }
    return "normal";
}

std::optional<Urgency> urgencyFromName(std::string_view name)
{
    for (int u = 0; u <= int(Urgency::High); ++u)
        if (urgencyName(Urgency(u)) == name)
            return Urgency(u);
    return std::nullopt;
}

std::string_view eventKindName(EventKind kind)
{
    switch (kind) {
    case EventKind::Granted:
        return "coordination.lease.granted";
    case EventKind::Refused:
        return "coordination.lease.refused";
    case EventKind::Released:
        return "coordination.lease.released";
    case EventKind::Expired:
        return "coordination.lease.expired";
    case EventKind::Pinned:
        return "coordination.lease.pinned";
    case EventKind::Unpinned:
        return "coordination.lease.unpinned";
    case EventKind::AdminReleaseHolder:
        return "coordination.lease.admin.release_holder";
    case EventKind::AdminReleaseAll:
        return "coordination.lease.admin.release_all";
    case EventKind::AdminReleaseLease:
        return "coordination.lease.admin.release_lease";
    case EventKind::AdminSuspend:
        return "coordination.lease.admin.suspend";
    case EventKind::AdminPause:
        return "coordination.lease.admin.pause";
    case EventKind::WorkspaceMutation:
        return "workspace.mutation";
    case EventKind::ReleaseRequestRaised:
        return "coordination.release_request.raised";
    case EventKind::ReleaseRequestDeclined:
        return "coordination.release_request.declined";
    case EventKind::ReleaseRequestOverdue:
        return "coordination.release_request.overdue";
    }
    return "coordination.lease.granted";
}

std::optional<EventKind> eventKindFromName(std::string_view name)
{
    for (int k = 0; k <= int(EventKind::ReleaseRequestOverdue); ++k)
        if (eventKindName(EventKind(k)) == name)
            return EventKind(k);
    return std::nullopt;
}

} // namespace leasehold
