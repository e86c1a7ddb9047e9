// A sick store never stalls an agent or leaks a lease: the service over real loopback HTTP with
// a store the test drives by hand (fakestore.h). Each fault is injected at an exact point -
// before a change is durable, while it waits, after its client left - and time moves only when
// the test moves the manual clock.

#include "fakestore.h"
#include "mcptest.h"

#include <QTcpSocket>

using namespace leasehold;
using namespace leasehold::test;
using nlohmann::json;

class TstStoreFaults : public QObject
{
    Q_OBJECT

private slots:
    void init();
    void cleanup();

    void aGrantTheStoreNeverConfirmsIsGivenBackWithinTheBound();
    void aStoreThatFallsIllAnswersWaitingChangesAtOnce();
    void whileDegradedGrantsAreRefusedAndTheRestIsServed();
    void healthAndMetricsSayWhatIsWrong();
    void metricsShowHowLongCommitsTake();
    void parkedWaitsOutlastAnOutageAndAreGrantedAfter();
    void aClientGoneBeforeDurableLeavesNoLease();
    void aClientGoneAfterItsWaitWasGrantedLeavesNoLease();
    void mcpCallsAreToldTheStoreIsUnavailable();
    void anMcpRequestCancelledBeforeDurableLeavesNoLease();
    void anMcpSessionEndedBeforeDurableLeavesNoLease();
    void aHandlerThatThrowsAnswers500();

private:
    // Runs the event loop until the engine holds `n` leases (the request reached the engine).
    bool leasesBecome(std::size_t n)
    {
        return QTest::qWaitFor([&] { return s->host->engine().leaseCount() == n; }, 5000);
    }
    double trustOf(const char *did) const
    {
        const auto a = s->host->engine().agentState(did);
        return a ? a->trust : -1;
    }
    // The id of a lease `did` holds, or "".
    std::string leaseOf(const std::string &did) const
    {
        for (const LeaseInfo &l : s->host->engine().snapshot().leases)
            if (l.holder == did)
                return l.leaseId;
        return {};
    }
    // The reason of the last ledger event of `kind` for `did`.
    std::string lastReason(EventKind kind, const std::string &did) const
    {
        std::string reason;
        for (const LedgerEvent &e : s->host->ledger(0, 100'000))
            if (e.kind == kind && e.actorDid == did)
                reason = e.reason;
        return reason;
    }

    // A lock_acquire over MCP that was granted and whose answer now waits for the disk.
    QNetworkReply *grantedAwaitingDisk(McpClient &client, int id)
    {
        store->autoCommit = true;
        if (client.initialize().status != 200)
            return nullptr;
        store->autoCommit = false;
        QNetworkReply *pending = client.start(
            "tools/call", {{"name", "lock_acquire"}, {"arguments", {{"paths", {"lock:deploy"}}}}},
            id);
        return leasesBecome(1) ? pending : nullptr;
    }

    std::unique_ptr<ServiceFixture> s;
    std::unique_ptr<FakeStore> store;
};

void TstStoreFaults::init()
{
    s = std::make_unique<ServiceFixture>();
    QVERIFY(s->port != 0);
    store = std::make_unique<FakeStore>();
    s->host->restoreFrom(*store, StoredState{});
    s->host->setStoreTimeoutMs(5000);
    store->commitAll();
}

void TstStoreFaults::cleanup()
{
    s->host->engine().checkInvariants();
    s.reset();
    store.reset();
}

void TstStoreFaults::aGrantTheStoreNeverConfirmsIsGivenBackWithinTheBound()
{
    QNetworkReply *pending = s->send("POST", QString(RestApi::kBase) + "/lease",
                                     R"({"resource":"lock:deploy/production"})", kKeyA);
    QVERIFY(leasesBecome(1));
    QVERIFY(!pending->isFinished());
    const double trust = trustOf("did:agent:a");
    // The disk says nothing for the whole bound: the host stops waiting for it.
    s->clock.advance(4999);
    s->host->tick();
    QCoreApplication::processEvents();
    QVERIFY(!pending->isFinished());
    // Decided on the host, not on the wire: one millisecond short, nothing was given back.
    QCOMPARE(s->host->engine().leaseCount(), 1u);
    QVERIFY(s->host->storeHealth().ok());
    s->clock.advance(1);
    s->host->tick();
    const HttpResult r = ServiceFixture::finish(pending);
    QCOMPARE(r.status, 503);
    JCOMPARE(r.body["reason"], "store_unavailable");
    JCOMPARE(r.body["store"], "unresponsive");
    QCOMPARE(r.header("Retry-After"), QByteArray("2"));
    // Given back: no lease, no trust effect, recorded with its cause.
    QCOMPARE(s->host->engine().leaseCount(), 0u);
    QCOMPARE(trustOf("did:agent:a"), trust);
    QCOMPARE(lastReason(EventKind::Released, "did:agent:a"), std::string("store_unavailable"));
    QCOMPARE(s->host->storeHealth().problem, StoreHealth::Problem::Unresponsive);

    // The disk answers again: healthy, and grants are made and answered as before.
    store->commitAll();
    QVERIFY(s->host->storeHealth().ok());
    store->autoCommit = true;
    QCOMPARE(s->post("/lease", {{"resource", "lock:deploy/production"}}, kKeyB).status, 200);
}

void TstStoreFaults::aStoreThatFallsIllAnswersWaitingChangesAtOnce()
{
    store->autoCommit = true;
    QCOMPARE(s->post("/lease", {{"resource", "lock:a"}}, kKeyA).status, 200);
    store->autoCommit = false;
    QNetworkReply *grant =
        s->send("POST", QString(RestApi::kBase) + "/lease", R"({"resource":"lock:b"})", kKeyB);
    QNetworkReply *release =
        s->send("POST", QString(RestApi::kBase) + "/release", R"({"resource":"lock:a"})", kKeyA);
    // lock:b granted, lock:a released: both wait for the disk.
    QTRY_VERIFY_WITH_TIMEOUT(lastReason(EventKind::Released, "did:agent:a") == "release" &&
                                 s->host->engine().lease(leaseOf("did:agent:b")),
                             5000);
    QCOMPARE(s->host->engine().leaseCount(), 1u);

    const double trust = trustOf("did:agent:b");
    store->report(StoreHealth::Problem::DiskFull); // no clock moves: answered at once
    const HttpResult g = ServiceFixture::finish(grant);
    QCOMPARE(g.status, 503);
    JCOMPARE(g.body["store"], "disk_full");
    QVERIFY2(g.body["error"].get<std::string>().find("full") != std::string::npos,
             g.raw.constData());
    // The release stands and is answered as made (it may come back after a crash, then expire).
    const HttpResult rel = ServiceFixture::finish(release);
    QCOMPARE(rel.status, 200);
    QCOMPARE(s->host->engine().leaseCount(), 0u);
    QCOMPARE(trustOf("did:agent:b"), trust);
}

void TstStoreFaults::whileDegradedGrantsAreRefusedAndTheRestIsServed()
{
    store->autoCommit = true;
    const HttpResult held = s->post("/lease", {{"resource", "lock:a"}, {"ttlMs", 60'000}}, kKeyA);
    QCOMPARE(held.status, 200);
    const std::string leaseId = held.body["lease"]["leaseId"];
    store->autoCommit = false;
    store->report(StoreHealth::Problem::IoError);

    const HttpResult refused = s->post("/lease", {{"resource", "lock:b"}}, kKeyB);
    QCOMPARE(refused.status, 503);
    JCOMPARE(refused.body["reason"], "store_unavailable");
    QCOMPARE(refused.header("Retry-After"), QByteArray("2"));
    QCOMPARE(s->host->engine().leaseCount(), 1u);

    // Reads, renewals, releases and levers are answered without waiting for the disk.
    QCOMPARE(s->get(QString(RestApi::kBase) + "/status", kKeyB).status, 200);
    QCOMPARE(s->post("/renew", {{"resource", "lock:a"}, {"leaseId", leaseId}}, kKeyA).status, 200);
    QCOMPARE(s->post("/admin/pause", {{"paused", false}}, kKeyAdmin).status, 200);
    QCOMPARE(s->post("/release", {{"resource", "lock:a"}}, kKeyA).status, 200);
    QCOMPARE(s->host->engine().leaseCount(), 0u);

    // The first commit after the fault: ok again without a restart.
    store->report(StoreHealth::Problem::None);
    store->autoCommit = true;
    QCOMPARE(s->post("/lease", {{"resource", "lock:b"}}, kKeyB).status, 200);
}

void TstStoreFaults::healthAndMetricsSayWhatIsWrong()
{
    QCOMPARE(s->get("/healthz").status, 200);
    store->report(StoreHealth::Problem::ReadOnly);
    const HttpResult health = s->get("/healthz");
    QCOMPARE(health.status, 503);
    JCOMPARE(health.body["store"], "read_only");
    JCOMPARE(health.body["ok"], false);
    (void)s->post("/lease", {{"resource", "lock:x"}}, kKeyA);
    const QByteArray metrics = s->get("/metrics").raw;
    QVERIFY(metrics.contains("leasehold_store_healthy 0\n"));
    QVERIFY(metrics.contains("leasehold_store_problem{state=\"read_only\"} 1\n"));
    QVERIFY(metrics.contains("leasehold_store_refused_changes_total 1\n"));
    QVERIFY(metrics.contains("leasehold_refusals_total{reason=\"store_unavailable\"} 1\n"));
    store->report(StoreHealth::Problem::None);
    QCOMPARE(s->get("/healthz").status, 200);
    QVERIFY(s->get("/metrics").raw.contains("leasehold_store_healthy 1\n"));
}

void TstStoreFaults::metricsShowHowLongCommitsTake()
{
    using namespace std::chrono_literals;
    store->commitTimes.record(300us);
    store->commitTimes.record(3ms);
    store->commitTimes.record(2s);
    const QByteArray metrics = s->get("/metrics").raw;
    QVERIFY(metrics.contains("# TYPE leasehold_store_commit_duration_seconds histogram\n"));
    // Cumulative, as Prometheus reads a histogram: each bound counts every commit at or below it.
    const std::pair<const char *, int> expected[] = {
        {"0.00025", 0}, {"0.0005", 1}, {"0.001", 1}, {"0.0025", 1}, {"0.005", 2},
        {"0.01", 2},    {"0.025", 2},  {"0.05", 2},  {"0.1", 2},    {"0.25", 2},
        {"1", 2},       {"5", 3},      {"+Inf", 3}};
    for (const auto &[bound, count] : expected) {
        const QByteArray line = "leasehold_store_commit_duration_seconds_bucket{le=\"" +
                                QByteArray(bound) + "\"} " + QByteArray::number(count) + '\n';
        QVERIFY2(metrics.contains(line), line.constData());
    }
    QVERIFY(metrics.contains("leasehold_store_commit_duration_seconds_count 3\n"));
    QVERIFY(metrics.contains("leasehold_store_commit_duration_seconds_sum 2.0033\n"));
}

void TstStoreFaults::parkedWaitsOutlastAnOutageAndAreGrantedAfter()
{
    store->autoCommit = true;
    QCOMPARE(s->post("/lease", {{"resource", "lock:a"}}, kKeyA).status, 200);
    QNetworkReply *waiting = s->send("POST", QString(RestApi::kBase) + "/lease",
                                     R"({"resource":"lock:a","waitMs":20000})", kKeyB);
    QTRY_COMPARE_WITH_TIMEOUT(s->host->engine().parkedCount(), std::size_t(1), 5000);
    store->autoCommit = false;
    store->report(StoreHealth::Problem::Locked);
    // The holder lets go during the outage: the waiter is not granted what cannot be recorded.
    QCOMPARE(s->post("/release", {{"resource", "lock:a"}}, kKeyA).status, 200);
    QCOMPARE(s->host->engine().parkedCount(), std::size_t(1));
    QCOMPARE(s->host->engine().leaseCount(), 0u);
    s->host->engine().checkInvariants();
    // Recovered: granted in order, answered once durable.
    store->report(StoreHealth::Problem::None);
    QCOMPARE(s->host->engine().parkedCount(), std::size_t(0));
    QCOMPARE(s->host->engine().leaseCount(), 1u);
    store->commitAll();
    const HttpResult r = ServiceFixture::finish(waiting);
    QCOMPARE(r.status, 200);
    JCOMPARE(r.body["lease"]["holder"], "did:agent:b");
}

void TstStoreFaults::aClientGoneBeforeDurableLeavesNoLease()
{
    QTcpSocket client;
    client.connectToHost(QHostAddress::LocalHost, s->port);
    QVERIFY(client.waitForConnected(5000));
    const QByteArray body = R"({"resource":"lock:deploy/production"})";
    client.write("POST " + QByteArray(RestApi::kBase) +
                 "/lease HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + kKeyA +
                 "\r\nContent-Type: application/json\r\nContent-Length: " +
                 QByteArray::number(body.size()) + "\r\n\r\n" + body);
    QVERIFY(leasesBecome(1)); // granted, not yet durable, not yet answered
    const double trust = trustOf("did:agent:a");
    client.abort();
    QTRY_COMPARE_WITH_TIMEOUT(s->front->gauges().openConnections, 0, 5000);
    store->commitAll(); // durable now, but nobody is there to hear it
    QCOMPARE(s->host->engine().leaseCount(), 0u);
    QCOMPARE(trustOf("did:agent:a"), trust);
    QCOMPARE(lastReason(EventKind::Released, "did:agent:a"), std::string("abandoned"));
}

void TstStoreFaults::aClientGoneAfterItsWaitWasGrantedLeavesNoLease()
{
    store->autoCommit = true;
    QCOMPARE(s->post("/lease", {{"resource", "lock:a"}}, kKeyA).status, 200);
    QTcpSocket client;
    client.connectToHost(QHostAddress::LocalHost, s->port);
    QVERIFY(client.waitForConnected(5000));
    const QByteArray body = R"({"resource":"lock:a","waitMs":20000})";
    client.write("POST " + QByteArray(RestApi::kBase) +
                 "/lease HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + kKeyB +
                 "\r\nContent-Type: application/json\r\nContent-Length: " +
                 QByteArray::number(body.size()) + "\r\n\r\n" + body);
    QTRY_COMPARE_WITH_TIMEOUT(s->host->engine().parkedCount(), std::size_t(1), 5000);
    store->autoCommit = false;
    // A's release wakes B's wait: B is granted, and the answer waits for the disk...
    QNetworkReply *release =
        s->send("POST", QString(RestApi::kBase) + "/release", R"({"resource":"lock:a"})", kKeyA);
    QTRY_COMPARE_WITH_TIMEOUT(s->host->engine().parkedCount(), std::size_t(0), 5000);
    QCOMPARE(s->host->engine().leaseCount(), 1u);
    const double trust = trustOf("did:agent:b");
    // ...when B's client leaves.
    client.abort();
    QTRY_COMPARE_WITH_TIMEOUT(s->front->gauges().openConnections, 1, 5000);
    store->commitAll();
    QCOMPARE(ServiceFixture::finish(release).status, 200);
    QCOMPARE(s->host->engine().leaseCount(), 0u);
    QCOMPARE(trustOf("did:agent:b"), trust);
    QCOMPARE(lastReason(EventKind::Released, "did:agent:b"), std::string("abandoned"));
}

void TstStoreFaults::mcpCallsAreToldTheStoreIsUnavailable()
{
    store->autoCommit = true;
    McpClient client(*s, kKeyA);
    QCOMPARE(client.initialize().status, 200);
    (void)client.post({{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}});

    // Refused up front while degraded: an isError result with a sentence.
    store->report(StoreHealth::Problem::DiskFull);
    const json refused = client.tool("lock_acquire", {{"paths", {"lock:deploy"}}});
    JCOMPARE(refused["isError"], true);
    JCOMPARE(refused["structuredContent"]["reason"], "store_unavailable");
    QVERIFY(refused["content"][0]["text"].get<std::string>().find("full") != std::string::npos);
    store->report(StoreHealth::Problem::None);

    // Granted, then the disk fails before it is durable: the result is rewritten, the lease
    // given back.
    store->autoCommit = false;
    QNetworkReply *pending = client.start(
        "tools/call", {{"name", "lock_acquire"}, {"arguments", {{"paths", {"lock:deploy"}}}}}, 7);
    QVERIFY(leasesBecome(1));
    store->report(StoreHealth::Problem::IoError);
    const HttpResult r = ServiceFixture::finish(pending);
    QCOMPARE(r.status, 200);
    JCOMPARE(r.body["id"], 7);
    JCOMPARE(r.body["result"]["isError"], true);
    JCOMPARE(r.body["result"]["structuredContent"]["reason"], "store_unavailable");
    QCOMPARE(s->host->engine().leaseCount(), 0u);
}

void TstStoreFaults::anMcpRequestCancelledBeforeDurableLeavesNoLease()
{
    McpClient client(*s, kKeyA);
    QNetworkReply *pending = grantedAwaitingDisk(client, 11);
    QVERIFY(pending);
    const double trust = trustOf("did:agent:a");
    // The client gives up on the call (its SDK will ignore the answer from now on).
    QNetworkReply *cancel = client.send(
        "POST",
        R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":11}})");
    QVERIFY(leasesBecome(0));
    store->commitAll();
    QCOMPARE(ServiceFixture::finish(cancel).status, 202);
    const HttpResult r = ServiceFixture::finish(pending);
    JCOMPARE(r.body["id"], 11);
    JCOMPARE(r.body["result"]["isError"], true);
    JCOMPARE(r.body["result"]["structuredContent"]["reason"], "cancelled");
    QCOMPARE(trustOf("did:agent:a"), trust);
    QCOMPARE(lastReason(EventKind::Released, "did:agent:a"), std::string("abandoned"));
    // A cancel after the answer went out changes nothing: the lease is the agent's.
    store->autoCommit = true;
    const json granted = client.tool("lock_acquire", {{"paths", {"lock:deploy"}}}, 12);
    JCOMPARE(granted["structuredContent"]["ok"], true);
    (void)client.post({{"jsonrpc", "2.0"},
                       {"method", "notifications/cancelled"},
                       {"params", {{"requestId", 12}}}});
    QCOMPARE(s->host->engine().leaseCount(), 1u);
}

void TstStoreFaults::anMcpSessionEndedBeforeDurableLeavesNoLease()
{
    McpClient client(*s, kKeyA);
    QNetworkReply *pending = grantedAwaitingDisk(client, 5);
    QVERIFY(pending);
    QNetworkReply *bye = client.send("DELETE", {});
    QVERIFY(leasesBecome(0));
    store->commitAll();
    QCOMPARE(ServiceFixture::finish(bye).status, 204);
    JCOMPARE(ServiceFixture::finish(pending).body["result"]["structuredContent"]["reason"],
             "cancelled");
    QCOMPARE(lastReason(EventKind::Released, "did:agent:a"), std::string("abandoned"));
}

void TstStoreFaults::aHandlerThatThrowsAnswers500()
{
    s->front->addRoute("GET", QStringLiteral("/test/throw"), Access::Public,
                       [](const RestCall &, const Respond &, Deferral &) {
                           throw std::runtime_error("a bug in a handler");
                       });
    const HttpResult r = s->get("/test/throw");
    QCOMPARE(r.status, 500);
    JCOMPARE(r.body["reason"], "internal");
    // The service goes on.
    store->autoCommit = true;
    QCOMPARE(s->post("/lease", {{"resource", "lock:a"}}, kKeyA).status, 200);
}

QTEST_GUILESS_MAIN(TstStoreFaults)
#include "tst_storefaults.moc"
