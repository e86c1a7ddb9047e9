#include "refusals.h"

#include "wording.h"

namespace leasehold {

namespace {

QString q(const std::string &s)
{
    return QString::fromStdString(s);
}

QString leaseHeld(const Refusal &r, const NextSteps &steps)
{
    QString s;
    if (r.heldBackMs > 0) {
        // Lock-delay: the lease ended without a release; its holder may still be writing.
        s = QStringLiteral("%1 is held back for %2 more")
                .arg(q(r.resource), formatDuration(r.heldBackMs));
        if (!r.heldResource.empty() && r.heldResource != r.resource)
            s += QStringLiteral(" through %1").arg(q(r.heldResource));
        s += QStringLiteral(": %1's lease on it ended without a release (lock-delay).")
                 .arg(q(r.holder));
    } else {
        s = r.queued ? QStringLiteral("%1 is queued for by %2").arg(q(r.resource), q(r.holder))
                     : QStringLiteral("%1 is held by %2").arg(q(r.resource), q(r.holder));
        if (!r.heldResource.empty() && r.heldResource != r.resource)
            s += QStringLiteral(" through %1").arg(q(r.heldResource));
        s += QStringLiteral(" (for %1, %2 %3).")
                 .arg(formatDuration(r.heldForMs),
                      r.queued ? QStringLiteral("waiting up to") : QStringLiteral("expires in"),
                      formatDuration(r.expiresInMs));
    }
    if (r.cancelled)
        s += QStringLiteral(" Your wait was cut short; nothing was taken.");
    else if (r.waitedMs >= 0)
        s += QStringLiteral(" You waited %1.").arg(formatDuration(r.waitedMs));
    if (r.holdAndWait)
        s += QStringLiteral(" You hold leases, so you may not wait: call %1, then ask for your "
                            "whole working set in one %2 call.")
                 .arg(steps.release, steps.acquire);
    else
        s += QStringLiteral(" Back off %1 and call %2 again, or work on something else.")
                 .arg(formatDuration(r.stampede ? r.stampede->waitMs
                                                : 1000LL * retryAfterSeconds(r)),
                      steps.acquire);
    return s;
}

// "Waiting for R0 would close a cycle: R0 is held by A1, who waits for R1, held by A2, who
// waits for R2, which you hold." Any length; the last resource is always the caller's.
QString deadlock(const Refusal &r, const NextSteps &steps)
{
    QString s = QStringLiteral("Waiting for %1 would close a cycle: it is held by %2")
                    .arg(q(r.resource), q(r.holder));
    for (std::size_t i = 1; i < r.cycle.size(); ++i) {
        s += QStringLiteral(", who waits for %1").arg(q(r.cycle[i].resource));
        s += i + 1 < r.cycle.size() ? QStringLiteral(", held by %1").arg(q(r.cycle[i + 1].agent))
                                    : QStringLiteral(", which you hold");
    }
    return s + QStringLiteral(". Call %1 without arguments (it lets go of everything you "
                              "hold), then %2 with everything you need in one call.")
                   .arg(steps.release, steps.acquire);
}

} // namespace

const RefusalRule &refusalRule(RefusalReason reason)
{
    for (const RefusalRule &rule : kRefusalRules) {
        if (rule.reason == reason)
            return rule;
    }
    return kRefusalRules.front();
}

int retryAfterSeconds(const Refusal &r)
{
    const RefusalRule &rule = refusalRule(r.reason);
    if (!rule.retryable)
        return 0;
    if (r.reason == RefusalReason::LeaseHeld && r.stampede)
        return static_cast<int>(std::max<std::int64_t>(1, (r.stampede->waitMs + 999) / 1000));
    return rule.retryAfterS;
}

NextSteps restSteps()
{
    return {QStringLiteral("POST /lease"), QStringLiteral("POST /release"),
            QStringLiteral("GET /status")};
}

QString refusalSentence(const Refusal &r, const NextSteps &steps)
{
    const QString see = QStringLiteral(" Call %1 to see what you hold.").arg(steps.status);
    switch (r.reason) {
    case RefusalReason::LeaseHeld:
        return leaseHeld(r, steps);
    case RefusalReason::Deadlock:
        return deadlock(r, steps);
    case RefusalReason::StaleLease:
        if (!r.pinId.empty())
            return QStringLiteral("Pin %1 is no longer current (unpinned or dropped).")
                       .arg(q(r.pinId)) +
                   see;
        return QStringLiteral("Lease %1 is no longer current%2 (released, expired or never "
                              "yours).")
                   .arg(q(r.leaseId),
                        r.resource.empty() ? QString() : QStringLiteral(" on ") + q(r.resource)) +
               see;
    case RefusalReason::NotHeld:
        if (!r.pinId.empty())
            return QStringLiteral("Pin %1 belongs to another agent.").arg(q(r.pinId)) + see;
        if (!r.leaseId.empty())
            return QStringLiteral("Lease %1 belongs to another agent.").arg(q(r.leaseId)) + see;
        return QStringLiteral("You do not hold %1.").arg(q(r.resource)) + see;
    case RefusalReason::Suspended:
        return QStringLiteral("%1 by an operator; nothing is granted to you until an operator "
                              "lifts it. Stop and tell the user.")
            .arg(r.whileParked ? QStringLiteral("You were suspended while you waited")
                               : QStringLiteral("You are suspended"));
    case RefusalReason::Paused:
        return QStringLiteral("%1; try again in %2, and tell the user if it persists.")
            .arg(r.whileParked ? QStringLiteral("An operator paused admissions while you waited")
                               : QStringLiteral("An operator has paused admissions"),
                 formatDuration(1000LL * retryAfterSeconds(r)));
    case RefusalReason::StoreUnavailable:
        return QStringLiteral("The service cannot record new leases right now%1; nothing was "
                              "granted. Do not edit anything this would have covered; try again "
                              "in %2, and tell the user if it persists.")
            .arg(r.problem.empty() ? QString() : QStringLiteral(" (%1)").arg(q(r.problem)),
                 formatDuration(1000LL * retryAfterSeconds(r)));
    }
    return {};
}

} // namespace leasehold
