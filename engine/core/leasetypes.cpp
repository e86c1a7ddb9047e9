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
    }
    return "coordination.lease.granted";
}

std::optional<EventKind> eventKindFromName(std::string_view name)
{
    for (int k = 0; k <= int(EventKind::WorkspaceMutation); ++k)
        if (eventKindName(EventKind(k)) == name)
            return EventKind(k);
    return std::nullopt;
}

std::string detailValue(std::string_view detail, std::string_view key)
{
    for (std::size_t at = 0; at < detail.size();) {
        const std::size_t end = std::min(detail.find(' ', at), detail.size());
        const std::string_view pair = detail.substr(at, end - at);
        if (pair.size() > key.size() && pair.substr(0, key.size()) == key &&
            pair[key.size()] == '=')
            return std::string(pair.substr(key.size() + 1));
        at = end + 1;
    }
    return {};
}

} // namespace leasehold
