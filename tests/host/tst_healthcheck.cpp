// The health check's findings (ctl doctor, GET /health, the console's Health page) from
// snapshots and facts made here, and the last hour's incident counts on given times.
#include "healthcheck.h"

#include <QTest>

using namespace leasehold;

namespace {

constexpr TimeMs kNow = 1'700'000'000'000;

AgentInfo agent(const std::string &did, int leases, ViaSet via, TimeMs lastSeen)
{
    AgentInfo a;
    a.actorDid = did;
    a.leases = leases;
    a.via = via;
    a.lastSeen = lastSeen;
    return a;
}

LeaseInfo lease(const std::string &resource, const std::string &holder, TimeMs expiresAt)
{
    LeaseInfo l;
    l.leaseId = "lease-" + resource;
    l.resource = resource;
    l.holder = holder;
    l.expiresAt = expiresAt;
    return l;
}

WaiterInfo parked(const std::string &who, const std::string &resource, const std::string &holder,
                  TimeMs since)
{
    WaiterInfo w;
    w.actorDid = who;
    w.resource = resource;
    w.holder = holder;
    w.parked = true;
    w.since = since;
    return w;
}

LedgerEvent eventAt(EventKind kind, TimeMs at, const std::string &reason = {})
{
    LedgerEvent e;
    e.kind = kind;
    e.at = at;
    e.reason = reason;
    return e;
}

QStringList codes(const std::vector<HealthFinding> &findings)
{
    QStringList out;
    for (const HealthFinding &f : findings)
        out << QString::fromStdString(f.code);
    return out;
}

} // namespace

class TstHealthCheck : public QObject
{
    Q_OBJECT

private slots:
    void aQuietInstanceHasNoFindings();
    void theStoreDownIsCritical();
    void diskRoomBelowTheMinimumWarnsAndFarBelowIsCritical();
    void aHolderLiveOnNoSurfaceIsNamedWithWhatItHolds();
    void deadlocksLongWaitsAndLeasesRunningOutUnderWaiters();
    void aClusterWithoutALeaderIsCritical();
    void theLastHourCountsByMinuteAndForgetsOlder();
    void anOverdueReleaseRequestNamesTheLeaseToRelease();
    void aFailingWebhookIsNamedByIdAndHostWithItsFix();
    void findingsComeWorstFirst();
};

void TstHealthCheck::aQuietInstanceHasNoFindings()
{
    Snapshot s;
    s.agents.push_back(agent("did:agent:live", 1, 1, kNow - 1000)); // live on a surface
    s.leases.push_back(lease("src/a", "did:agent:live", kNow + 60'000));
    HealthFacts f;
    f.diskFreeBytes = 10LL << 30;
    QVERIFY(healthFindings(s, f, kNow).empty());
}

void TstHealthCheck::theStoreDownIsCritical()
{
    HealthFacts f;
    f.storeHealth = "disk_full";
    f.storeProblem = "the disk is full";
    f.dataDir = "/var/lib/leasehold";
    const auto found = healthFindings({}, f, kNow);
    QCOMPARE(codes(found), QStringList{"store"});
    QCOMPARE(found[0].severity, HealthSeverity::Critical);
    QVERIFY(found[0].what.contains("the disk is full"));
    QVERIFY(found[0].fix.contains("/var/lib/leasehold"));
}

void TstHealthCheck::diskRoomBelowTheMinimumWarnsAndFarBelowIsCritical()
{
    HealthFacts f;
    f.dataDir = "/data";
    f.minFreeBytes = 1024LL << 20;
    f.diskTotalBytes = 100LL << 30;
    f.diskFreeBytes = 1024LL << 20; // exactly the minimum: enough
    QVERIFY(healthFindings({}, f, kNow).empty());
    f.diskFreeBytes = 500LL << 20;
    auto found = healthFindings({}, f, kNow);
    QCOMPARE(codes(found), QStringList{"disk"});
    QCOMPARE(found[0].severity, HealthSeverity::Warning);
    QCOMPARE(
        found[0].what,
        QStringLiteral("the data directory /data has 500 MiB free of 100 GiB (below 1024 MiB)"));
    f.diskFreeBytes = 63LL << 20; // under a sixteenth of the minimum
    found = healthFindings({}, f, kNow);
    QCOMPARE(found[0].severity, HealthSeverity::Critical);
    f.diskFreeBytes = -1; // not measured (in memory)
    QVERIFY(healthFindings({}, f, kNow).empty());
}

void TstHealthCheck::aHolderLiveOnNoSurfaceIsNamedWithWhatItHolds()
{
    Snapshot s;
    s.agents.push_back(agent("did:agent:gone", 4, 0, kNow - 125'000));
    s.agents.push_back(agent("did:agent:idle", 0, 0, kNow - 999'000)); // holds nothing: fine
    for (const char *r : {"a", "b", "c", "d"})
        s.leases.push_back(lease(r, "did:agent:gone", kNow + 60'000));
    const auto found = healthFindings(s, {}, kNow);
    QCOMPARE(codes(found), QStringList{"not_live"});
    QCOMPARE(found[0].what, QStringLiteral("did:agent:gone holds 4 leases (a, b, c, ...) and is "
                                           "live on no surface (last call 2 min 5 s ago)"));
    QVERIFY(found[0].fix.startsWith("leasehold ctl release-holder did:agent:gone"));
    QCOMPARE(found[0].agent, std::string("did:agent:gone"));
}

void TstHealthCheck::deadlocksLongWaitsAndLeasesRunningOutUnderWaiters()
{
    Snapshot s;
    s.leases.push_back(lease("lock:x", "did:agent:a", kNow + 4'000));  // soon, waited for
    s.leases.push_back(lease("lock:y", "did:agent:a", kNow + 4'000));  // soon, nobody waits
    s.leases.push_back(lease("lock:z", "did:agent:a", kNow + 90'000)); // waited for, not soon
    s.waiters.push_back(parked("did:agent:b", "lock:x", "did:agent:a", kNow - 12'000));
    s.waiters.push_back(parked("did:agent:c", "lock:x", "did:agent:a", kNow - 1'000));
    s.waiters.push_back(parked("did:agent:d", "lock:z", "did:agent:a", kNow - 2'000));
    DeadlockCycle cycle;
    cycle.steps = {{"did:agent:e", "lock:p"}, {"did:agent:f", "lock:q"}};
    s.deadlocks.push_back(cycle);
    const auto found = healthFindings(s, {}, kNow);
    QCOMPARE(codes(found), (QStringList{"deadlock", "long_wait", "expiring"}));
    QCOMPARE(found[1].what,
             QStringLiteral("the longest wait: did:agent:b for lock:x, 12 s so far"));
    QCOMPARE(found[2].what, QStringLiteral("lock:x, held by did:agent:a, runs out in 4 s with 2 "
                                           "agents parked behind it"));
    s.waiters[0].since = kNow - 9'000; // under 10 s: not worth a line
    QCOMPARE(codes(healthFindings(s, {}, kNow)), (QStringList{"deadlock", "expiring"}));
}

void TstHealthCheck::aClusterWithoutALeaderIsCritical()
{
    HealthFacts f;
    f.clustered = true;
    f.clusterRole = "standby";
    QCOMPARE(codes(healthFindings({}, f, kNow)), QStringList{"cluster"});
    f.clusterLeader = "http://10.0.0.1:7878";
    QVERIFY(healthFindings({}, f, kNow).empty());
    f.clusterRole = "leader";
    f.clusterLapsed = true;
    const auto found = healthFindings({}, f, kNow);
    QCOMPARE(found.size(), std::size_t(1));
    QVERIFY(found[0].what.contains("cannot confirm its etcd session"));
    // A standby whose ledger copy has not caught up with etcd for long: its lag is named.
    HealthFacts standby;
    standby.clustered = true;
    standby.clusterRole = "standby";
    standby.clusterLeader = "http://10.0.0.1:7878";
    standby.clusterFollowAgeMs = 700;
    QVERIFY(healthFindings({}, standby, kNow).empty());
    standby.clusterFollowAgeMs = 45'000;
    const auto lag = healthFindings({}, standby, kNow);
    QCOMPARE(codes(lag), QStringList{"cluster_lag"});
    QVERIFY2(lag[0].what.contains("last caught up with etcd 45 s ago"), qPrintable(lag[0].what));
    f.clusterFollowAgeMs = 45'000; // a leader writes the ledger itself: no lag to speak of
    QCOMPARE(codes(healthFindings({}, f, kNow)), QStringList{"cluster"});
}

void TstHealthCheck::theLastHourCountsByMinuteAndForgetsOlder()
{
    IncidentWindow w;
    const TimeMs start = 60'000 * 1'000'000LL; // on a minute
    w.note(eventAt(EventKind::Refused, start, "deadlock"));
    w.note(eventAt(EventKind::Refused, start + 1, "held")); // not an incident
    w.note(eventAt(EventKind::Expired, start + 30'000));
    w.note(eventAt(EventKind::AdminReleaseHolder, start + 61'000));
    w.note(eventAt(EventKind::Granted, start + 62'000));
    QCOMPARE(w.counts(start + 62'000), (IncidentWindow::Counts{1, 1, 1}));
    // An hour and a minute on: the first minute is gone, the second still counts.
    QCOMPARE(w.counts(start + 3'660'000), (IncidentWindow::Counts{0, 1, 0}));
    QCOMPARE(w.counts(start + 3'720'000), (IncidentWindow::Counts{0, 0, 0}));
    HealthFacts f;
    f.lastHour = {3, 2, 1};
    QCOMPARE(codes(healthFindings({}, f, kNow)),
             (QStringList{"deadlocks_refused", "force_releases", "expiries"}));
}

void TstHealthCheck::anOverdueReleaseRequestNamesTheLeaseToRelease()
{
    Snapshot s;
    ReleaseRequestInfo r;
    r.requestId = "rr_1";
    r.leaseId = "lease_7";
    r.resource = "lock:deploy/production";
    r.holder = "did:agent:a";
    r.requester = "did:agent:b";
    r.urgency = Urgency::High;
    r.raisedAt = kNow - 90'000;
    r.deadlineAt = kNow - 30'000;
    r.overdue = true;
    s.releaseRequests.push_back(r);
    const auto found = healthFindings(s, {}, kNow);
    QCOMPARE(codes(found), QStringList{"release_overdue"});
    QCOMPARE(found[0].agent, std::string("did:agent:a"));
    QVERIFY2(found[0].what.contains("did:agent:a has not answered the high-urgency release "
                                    "request for lock:deploy/production by did:agent:b"),
             qPrintable(found[0].what));
    QVERIFY(found[0].fix.startsWith("leasehold ctl release-lease lease_7"));
    // Open but not past its deadline: nothing to act on yet.
    s.releaseRequests[0].overdue = false;
    QVERIFY(healthFindings(s, {}, kNow).empty());
}

void TstHealthCheck::aFailingWebhookIsNamedByIdAndHostWithItsFix()
{
    HealthFacts f;
    f.webhooks.push_back({"wh-1", "hooks.example", 3, false, "HTTP 500"});
    f.webhooks.push_back({"wh-2", "pager.example", 0, true, "Connection refused"});
    const auto found = healthFindings({}, f, kNow);
    QCOMPARE(codes(found), (QStringList{"webhook", "webhook"}));
    QCOMPARE(found[0].severity, HealthSeverity::Warning);
    QCOMPARE(found[0].what,
             QStringLiteral("webhook wh-1 (hooks.example): 3 deliveries failed in the last hour; "
                            "last: HTTP 500"));
    QVERIFY(found[0].fix.contains("leasehold ctl webhooks test wh-1"));
    QCOMPARE(found[1].what, QStringLiteral("webhook wh-2 (pager.example): deliveries are being "
                                           "retried; last: Connection refused"));
    QVERIFY(found[1].fix.contains("ctl webhooks remove wh-2"));
}

void TstHealthCheck::findingsComeWorstFirst()
{
    Snapshot s;
    s.agents.push_back(agent("did:agent:gone", 1, 0, kNow - 60'000));
    s.leases.push_back(lease("a", "did:agent:gone", kNow + 60'000));
    HealthFacts f;
    f.lastHour = {0, 1, 0};
    f.storeHealth = "unresponsive";
    const auto found = healthFindings(s, f, kNow);
    QCOMPARE(codes(found), (QStringList{"store", "not_live", "force_releases"}));
    QCOMPARE(worstOf(found), HealthSeverity::Critical);
    QCOMPARE(worstOf({}), HealthSeverity::Info);
}

QTEST_GUILESS_MAIN(TstHealthCheck)
#include "tst_healthcheck.moc"
