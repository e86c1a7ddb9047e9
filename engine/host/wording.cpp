#include "wording.h"

#include <QStringList>

namespace leasehold {

QString formatDuration(std::int64_t ms)
{
    if (ms < 0)
        return QStringLiteral("-") + formatDuration(-ms);
    if (ms < 1000)
        return QStringLiteral("%1 ms").arg(ms);
    const std::int64_t s = ms / 1000;
    if (s < 60)
        return QStringLiteral("%1 s").arg(s);
    if (s < 3600)
        return s % 60 ? QStringLiteral("%1 min %2 s").arg(s / 60).arg(s % 60)
                      : QStringLiteral("%1 min").arg(s / 60);
    return (s % 3600) / 60 ? QStringLiteral("%1 h %2 min").arg(s / 3600).arg((s % 3600) / 60)
                           : QStringLiteral("%1 h").arg(s / 3600);
}

QString cyclePath(const std::vector<CycleStep> &cycle)
{
    if (cycle.empty())
        return {};
    QStringList parts;
    for (const CycleStep &s : cycle)
        parts << QString::fromStdString(s.agent) << QString::fromStdString(s.resource);
    parts << QString::fromStdString(cycle.front().agent);
    return parts.join(QStringLiteral(" \u2192 "));
}

QString eventSummary(const LedgerEvent &e)
{
    const EventFacts &f = e.facts;
    const auto q = [](const std::string &s) { return QString::fromStdString(s); };
    QStringList parts;
    switch (e.kind) {
    case EventKind::Granted:
        parts << QString::fromLatin1(modeName(f.mode));
        if (e.ttlMs > 0)
            parts << QStringLiteral("for %1").arg(formatDuration(e.ttlMs));
        break;
    case EventKind::Refused:
        if (!f.op.empty())
            parts << q(f.op);
        if (!f.cycle.empty())
            parts << QStringLiteral("cycle %1").arg(cyclePath(f.cycle));
        else if (!f.holder.empty())
            parts << QStringLiteral("holder %1").arg(q(f.holder));
        if (!f.pinId.empty())
            parts << QStringLiteral("pin %1").arg(q(f.pinId));
        break;
    case EventKind::Released:
    case EventKind::Expired:
        if (!f.by.empty())
            parts << QStringLiteral("by %1").arg(q(f.by));
        if (f.whileDown)
            parts << QStringLiteral("while the service was down");
        break;
    case EventKind::Pinned:
    case EventKind::Unpinned:
        parts << QStringLiteral("pin %1").arg(q(f.pinId));
        break;
    case EventKind::AdminReleaseHolder:
        parts << QStringLiteral("released %1 of %2").arg(f.released).arg(q(f.target));
        break;
    case EventKind::AdminReleaseAll:
    case EventKind::AdminReleaseLease:
        parts << QStringLiteral("released %1").arg(f.released);
        break;
    case EventKind::AdminSuspend:
        parts << (f.suspended ? QStringLiteral("suspended %1") : QStringLiteral("unsuspended %1"))
                     .arg(q(f.target));
        break;
    case EventKind::AdminPause:
        parts << (f.paused ? QStringLiteral("admissions paused")
                           : QStringLiteral("admissions resumed"));
        break;
    case EventKind::WorkspaceMutation:
        if (!f.to.empty())
            parts << QStringLiteral("to %1").arg(q(f.to));
        parts << QStringLiteral("%1 \u2192 %2")
                     .arg(f.before.empty() ? QStringLiteral("absent") : q(f.before),
                          f.after.empty() ? QStringLiteral("absent") : q(f.after));
        break;
    case EventKind::ReleaseRequestRaised:
        parts << QStringLiteral("%1 asks %2 to release it, %3 urgency")
                     .arg(q(f.requester), q(f.holder), q(f.urgency));
        if (f.deadlineAt > 0)
            parts << QStringLiteral("deadline in %1").arg(formatDuration(f.deadlineAt - e.at));
        break;
    case EventKind::ReleaseRequestDeclined:
        parts << QStringLiteral("%1 declined %2's request").arg(q(f.holder), q(f.requester));
        break;
    case EventKind::ReleaseRequestOverdue:
        parts << QStringLiteral("%1 did not answer %2's request in time")
                     .arg(q(f.holder), q(f.requester));
        break;
    }
    if (f.waitedMs >= 0)
        parts << QStringLiteral("waited %1").arg(formatDuration(f.waitedMs));
    return parts.join(QStringLiteral(", "));
}

} // namespace leasehold
