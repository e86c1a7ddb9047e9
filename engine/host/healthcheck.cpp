#include "healthcheck.h"

#include "wording.h"

#include <QStringList>

#include <algorithm>
#include <map>

namespace leasehold {

namespace {

constexpr TimeMs kMinuteMs = 60'000;
constexpr std::int64_t kMiB = 1024 * 1024;
// A lease this close to running out with someone parked behind it is worth a line.
constexpr TimeMs kExpiringSoonMs = 10'000;
// A wait this long is worth a line.
constexpr TimeMs kLongWaitMs = 10'000;
// A standby's ledger copy this far behind etcd is worth a line (it follows every 500 ms).
constexpr std::int64_t kClusterLagMs = 10'000;

QString q(const std::string &s)
{
    return QString::fromStdString(s);
}

QString mebibytes(std::int64_t bytes)
{
    return bytes >= 10 * 1024 * kMiB ? QStringLiteral("%1 GiB").arg(bytes / (1024 * kMiB))
                                     : QStringLiteral("%1 MiB").arg(bytes / kMiB);
}

void storeAndDisk(const HealthFacts &f, std::vector<HealthFinding> &out)
{
    if (f.storeHealth != "ok")
        out.push_back({HealthSeverity::Critical,
                       "store",
                       QStringLiteral("the store cannot record grants: %1")
                           .arg(q(f.storeProblem.empty() ? f.storeHealth : f.storeProblem)),
                       QStringLiteral("check the data directory's disk (room, permissions)%1; see "
                                      "docs/operating.md, State and crash recovery")
                           .arg(f.dataDir.isEmpty() ? QString() : QStringLiteral(": ") + f.dataDir),
                       {}});
    if (f.diskFreeBytes < 0 || f.minFreeBytes <= 0 || f.diskFreeBytes >= f.minFreeBytes)
        return;
    const bool critical = f.diskFreeBytes < f.minFreeBytes / 16;
    out.push_back(
        {critical ? HealthSeverity::Critical : HealthSeverity::Warning,
         "disk",
         QStringLiteral("the data directory %1 has %2 free%3 (below %4)")
             .arg(f.dataDir, mebibytes(f.diskFreeBytes),
                  f.diskTotalBytes > 0 ? QStringLiteral(" of ") + mebibytes(f.diskTotalBytes)
                                       : QString(),
                  mebibytes(f.minFreeBytes)),
         QStringLiteral("free room on that disk, or keep less ledger (ledgerRetainDays, "
                        "ledgerRetainRows in the config file)"),
         {}});
}

void cluster(const HealthFacts &f, std::vector<HealthFinding> &out)
{
    if (!f.clustered)
        return;
    if (f.clusterRole == "leader" && f.clusterLapsed)
        out.push_back({HealthSeverity::Critical,
                       "cluster",
                       QStringLiteral("this instance leads but cannot confirm its etcd session: "
                                      "it grants nothing until it can"),
                       QStringLiteral("check etcd: etcdctl endpoint health"),
                       {}});
    else if (f.clusterRole != "leader" && f.clusterLeader.empty())
        out.push_back({HealthSeverity::Critical,
                       "cluster",
                       QStringLiteral("the cluster has no leader this instance knows of"),
                       QStringLiteral("check etcd: etcdctl endpoint health"),
                       {}});
    // A standby serves ledger reads from its own copy, kept up with etcd's every half second.
    if (f.clusterRole == "standby" && f.clusterFollowAgeMs > kClusterLagMs)
        out.push_back({HealthSeverity::Warning,
                       "cluster_lag",
                       QStringLiteral("this standby's copy of the ledger last caught up with "
                                      "etcd %1 ago: its ledger reads lag behind the leader's")
                           .arg(formatDuration(f.clusterFollowAgeMs)),
                       QStringLiteral("check etcd from this machine: etcdctl endpoint health "
                                      "(the log says why the ledger cannot be read)"),
                       {}});
    if (!f.clusterProblem.empty())
        out.push_back({HealthSeverity::Warning,
                       "cluster",
                       QStringLiteral("the last look at etcd failed: %1").arg(q(f.clusterProblem)),
                       QStringLiteral("check etcd: etcdctl endpoint health"),
                       {}});
}

void notLive(const Snapshot &s, TimeMs now, std::vector<HealthFinding> &out)
{
    std::map<std::string, QStringList> gone; // usually empty: the leases are walked only if not
    for (const AgentInfo &a : s.agents)
        if (a.leases > 0 && a.via == 0 && a.liveSessions == 0)
            gone[a.actorDid];
    if (gone.empty())
        return;
    for (const LeaseInfo &l : s.leases)
        if (auto it = gone.find(l.holder); it != gone.end() && it->second.size() < 3)
            it->second << q(l.resource);
    for (const AgentInfo &a : s.agents) {
        const auto it = gone.find(a.actorDid);
        if (it == gone.end())
            continue;
        QStringList names = it->second;
        if (a.leases > names.size())
            names << QStringLiteral("...");
        out.push_back(
            {HealthSeverity::Warning, "not_live",
             QStringLiteral("%1 holds %2 (%3) and is live on no surface (last call %4 ago)")
                 .arg(q(a.actorDid), countOf(a.leases, "lease", "leases"),
                      names.join(QStringLiteral(", ")), formatDuration(now - a.lastSeen)),
             QStringLiteral("leasehold ctl release-holder %1   (or: leasehold ctl sweep "
                            "--not-live-for 10m --dry-run)")
                 .arg(q(a.actorDid)),
             a.actorDid});
    }
}

void waits(const Snapshot &s, TimeMs now, std::vector<HealthFinding> &out)
{
    for (const DeadlockCycle &d : s.deadlocks)
        out.push_back({HealthSeverity::Warning, "deadlock",
                       QStringLiteral("a live deadlock: %1").arg(cyclePath(d.steps)),
                       QStringLiteral("leasehold ctl wait, then leasehold ctl release-holder one "
                                      "of them"),
                       d.steps.empty() ? std::string() : d.steps.front().agent});
    const WaiterInfo *longest = nullptr;
    std::map<std::pair<std::string, std::string>, int> parked; // (holder, resource) → waiters
    for (const WaiterInfo &w : s.waiters) {
        if (!w.parked)
            continue;
        if (!longest || w.since < longest->since)
            longest = &w;
        if (!w.holder.empty())
            ++parked[{w.holder, w.resource}];
    }
    if (longest && now - longest->since >= kLongWaitMs)
        out.push_back({HealthSeverity::Info, "long_wait",
                       QStringLiteral("the longest wait: %1 for %2, %3 so far")
                           .arg(q(longest->actorDid), q(longest->resource),
                                formatDuration(now - longest->since)),
                       QStringLiteral("leasehold ctl wait"), longest->actorDid});
    if (parked.empty())
        return;
    for (const LeaseInfo &l : s.leases) {
        if (l.expiresAt - now > kExpiringSoonMs)
            continue;
        const auto it = parked.find({l.holder, l.resource});
        if (it == parked.end())
            continue;
        out.push_back(
            {HealthSeverity::Info, "expiring",
             QStringLiteral("%1, held by %2, runs out in %3 with %4 parked behind it")
                 .arg(q(l.resource), q(l.holder),
                      formatDuration(std::max<TimeMs>(0, l.expiresAt - now)),
                      countOf(it->second, "agent", "agents")),
             QStringLiteral("nothing, if its holder is gone (the waiters get it then); else "
                            "leasehold ctl wait"),
             l.holder});
    }
}

void lastHour(const IncidentWindow::Counts &c, std::vector<HealthFinding> &out)
{
    struct Line
    {
        int count;
        HealthSeverity severity;
        const char *code, *one, *many, *what, *kind;
    };
    const Line lines[] = {
        {c.deadlocks, HealthSeverity::Warning, "deadlocks_refused", "deadlock", "deadlocks",
         "%1 refused in the last hour", "coordination.lease.refused"},
        {c.forced, HealthSeverity::Info, "force_releases", "force release", "force releases",
         "%1 by an operator in the last hour", "coordination.lease.admin.release_holder"},
        {c.expired, HealthSeverity::Info, "expiries", "lease", "leases",
         "%1 expired on their holders in the last hour", "coordination.lease.expired"},
    };
    for (const Line &l : lines)
        if (l.count > 0)
            out.push_back(
                {l.severity,
                 l.code,
                 QString::fromLatin1(l.what).arg(countOf(l.count, l.one, l.many)),
                 QStringLiteral("leasehold ctl ledger --kind %1").arg(QLatin1String(l.kind)),
                 {}});
}

// Release requests whose deadline passed unanswered: the holder neither let go nor declined.
void overdue(const Snapshot &s, TimeMs now, std::vector<HealthFinding> &out)
{
    for (const ReleaseRequestInfo &r : s.releaseRequests) {
        if (!r.overdue)
            continue;
        out.push_back(
            {HealthSeverity::Warning, "release_overdue",
             QStringLiteral("%1 has not answered the %2-urgency release request for %3 by %4 "
                            "(asked %5 ago, deadline passed %6 ago)")
                 .arg(q(r.holder), QString::fromLatin1(urgencyName(r.urgency)), q(r.resource),
                      q(r.requester), formatDuration(now - r.raisedAt),
                      formatDuration(std::max<TimeMs>(0, now - r.deadlineAt))),
             QStringLiteral("leasehold ctl release-lease %1   (forces it; or wait for %2)")
                 .arg(q(r.leaseId), q(r.holder)),
             r.holder});
    }
}

void webhooks(const std::vector<WebhookTrouble> &troubles, std::vector<HealthFinding> &out)
{
    for (const WebhookTrouble &t : troubles) {
        const QString id = QString::fromStdString(t.id);
        const QString where = QString::fromStdString(t.host);
        QString what =
            t.failedLastHour > 0
                ? QStringLiteral("webhook %1 (%2): %3 failed in the last hour")
                      .arg(id, where, countOf(t.failedLastHour, "delivery", "deliveries"))
                : QStringLiteral("webhook %1 (%2): deliveries are being retried").arg(id, where);
        if (!t.lastError.empty())
            what += QStringLiteral("; last: ") + QString::fromStdString(t.lastError);
        out.push_back({HealthSeverity::Warning,
                       "webhook",
                       what,
                       QStringLiteral("fix the receiver, then: leasehold ctl webhooks test %1   "
                                      "(or: ctl webhooks remove %1)")
                           .arg(id),
                       {}});
    }
}

} // namespace

const char *healthSeverityName(HealthSeverity severity)
{
    return severity == HealthSeverity::Critical  ? "critical"
           : severity == HealthSeverity::Warning ? "warning"
                                                 : "info";
}

void IncidentWindow::note(const LedgerEvent &e)
{
    const bool deadlock = e.kind == EventKind::Refused && e.reason == "deadlock";
    const bool forced = e.kind == EventKind::AdminReleaseHolder ||
                        e.kind == EventKind::AdminReleaseAll ||
                        e.kind == EventKind::AdminReleaseLease;
    const bool expired = e.kind == EventKind::Expired;
    if (!deadlock && !forced && !expired)
        return;
    const TimeMs minute = e.at / kMinuteMs;
    if (m_minutes.empty() || m_minutes.back().minute < minute)
        m_minutes.push_back({minute, {}});
    // Events arrive in time order; one a little out of it counts in the newest minute.
    Counts &c = m_minutes.back().counts;
    c.deadlocks += deadlock;
    c.forced += forced;
    c.expired += expired;
    trim(e.at);
}

void IncidentWindow::trim(TimeMs now)
{
    const TimeMs oldest = (now - kWindowMs) / kMinuteMs;
    while (!m_minutes.empty() && m_minutes.front().minute < oldest)
        m_minutes.pop_front();
}

IncidentWindow::Counts IncidentWindow::counts(TimeMs now) const
{
    const TimeMs oldest = (now - kWindowMs) / kMinuteMs;
    Counts total;
    for (const Minute &m : m_minutes) {
        if (m.minute < oldest)
            continue;
        total.deadlocks += m.counts.deadlocks;
        total.forced += m.counts.forced;
        total.expired += m.counts.expired;
    }
    return total;
}

std::vector<HealthFinding> healthFindings(const Snapshot &snapshot, const HealthFacts &facts,
                                          TimeMs now)
{
    std::vector<HealthFinding> out;
    storeAndDisk(facts, out);
    cluster(facts, out);
    notLive(snapshot, now, out);
    waits(snapshot, now, out);
    overdue(snapshot, now, out);
    lastHour(facts.lastHour, out);
    webhooks(facts.webhooks, out);
    std::stable_sort(out.begin(), out.end(), [](const HealthFinding &a, const HealthFinding &b) {
        return a.severity > b.severity;
    });
    return out;
}

HealthSeverity worstOf(const std::vector<HealthFinding> &findings)
{
    HealthSeverity worst = HealthSeverity::Info;
    for (const HealthFinding &f : findings)
        worst = std::max(worst, f.severity);
    return worst;
}

} // namespace leasehold
