// GET /watch over real loopback sockets: a snapshot at a revision then every change in order,
// under thousands of changes a second; resuming from Last-Event-ID with nothing missed, or a
// fresh snapshot once the revision left the ring; events held until the store made them
// durable; a client that stops reading cut off while another is served in full; heartbeats
// naming the revision; bad queries answered 400 naming the field.

#include "fakestore.h"
#include "servicetest.h"
#include "ssereader.h"

#include <map>

using namespace leasehold;
using namespace leasehold::test;
using nlohmann::json;

namespace {

const QByteArray kAuth = "Authorization: Bearer " + kKeyA + "\r\n";

// Leases by id, as a watcher keeps them: the snapshot, then each event applied.
using Table = std::map<std::string, json>;

void apply(Table &table, const json &event)
{
    const std::string kind = event["kind"];
    if (kind == "coordination.lease.granted")
        table[event["leaseId"]] = {{"resource", event["resource"]}, {"holder", event["actorDid"]}};
    else if (kind == "coordination.lease.released" || kind == "coordination.lease.expired")
        table.erase(event["leaseId"]);
}

Table tableOf(const json &leases)
{
    Table t;
    for (const json &l : leases)
        t[l["leaseId"]] = {{"resource", l["resource"]}, {"holder", l["holder"]}};
    return t;
}

} // namespace

class TstWatch : public QObject
{
    Q_OBJECT

private slots:
    void cleanup();

    void snapshotThenEveryChangeInOrder();
    void resumesFromLastEventIdWithNothingMissed();
    void compactedRevisionGetsAFreshSnapshot_data();
    void compactedRevisionGetsAFreshSnapshot();
    void allEventsIncludeRefusals();
    void eventsWaitUntilDurable();
    void slowClientIsCutOffOthersUnaffected();
    void heartbeatsNameTheRevision();
    void badQueriesNameTheField_data();
    void badQueriesNameTheField();
    void needsAKeyLikeTheReadRoutes();
    void aGuardsWatchKeepsItsAgentLive();

private:
    void start(ServiceFixture::Setup setup = {})
    {
        s = std::make_unique<ServiceFixture>(setup);
        QVERIFY(s->port != 0);
    }
    // `agent` takes `resource` (a write lease), straight through the engine.
    std::string acquire(const std::string &agent, const std::string &resource)
    {
        auto name = std::get<ResourceName>(s->host->parser().parse(resource));
        AcquireResult r = s->host->run([&](LeaseEngine &e) {
            return e.acquire({agent, {name}, Mode::Write, 30'000, 0});
        });
        const Grant *grant = std::get_if<Grant>(&r);
        return grant ? grant->leases.front().leaseId : std::string();
    }
    void release(const std::string &agent)
    {
        s->host->run([&](LeaseEngine &e) { e.release(agent, {}, {}); });
    }
    json engineLeases(const std::string &prefix)
    {
        json out = json::array();
        for (const LeaseInfo &l : s->host->engine().snapshot().leases)
            if (l.resource.rfind(prefix, 0) == 0)
                out.push_back(
                    {{"leaseId", l.leaseId}, {"resource", l.resource}, {"holder", l.holder}});
        return out;
    }
    std::unique_ptr<SseReader> watch(const QByteArray &query, const QByteArray &headers = kAuth)
    {
        return std::make_unique<SseReader>(s->port, QByteArray(RestApi::kBase) + "/watch" + query,
                                           headers);
    }

    std::unique_ptr<ServiceFixture> s;
    std::unique_ptr<FakeStore> store;
};

void TstWatch::cleanup()
{
    if (s)
        s->host->engine().checkInvariants();
    s.reset();
    store.reset();
}

void TstWatch::snapshotThenEveryChangeInOrder()
{
    start();
    acquire("did:agent:a", "src/a.ts");
    acquire("did:agent:b", "src/b.ts");
    acquire("did:agent:b", "lock:deploy");
    const std::uint64_t revision = s->host->engine().lastSeq();
    auto w = watch("?prefix=fs:");
    QVERIFY(w->waitForEvents(1));
    QCOMPARE(w->status(), 200);
    QVERIFY(w->head().contains("text/event-stream"));
    const SseEvent snapshot = w->events().front();
    QCOMPARE(snapshot.type, QByteArray("snapshot"));
    QCOMPARE(snapshot.id->toULongLong(), revision);
    JCOMPARE(snapshot.data["revision"], revision);
    JCOMPARE(snapshot.data["reason"], "new");
    Table table = tableOf(snapshot.data["leases"]);
    QCOMPARE(table.size(), 2u); // the lock is not under fs:

    // Three thousand changes as fast as the engine takes them (a cycle per agent, and the
    // lock's holder coming and going outside the prefix), read while they happen.
    for (int i = 0; i < 1000; ++i) {
        const std::string agent = "did:agent:c" + std::to_string(i % 50);
        acquire(agent, "src/c/" + std::to_string(i) + ".ts");
        acquire(agent, "lock:other/" + std::to_string(i));
        release(agent);
        if (i % 100 == 0)
            QTest::qWait(0);
    }
    QVERIFY2(w->waitForEvents(2001),
             qPrintable(QStringLiteral("%1 events").arg(w->events().size())));
    std::uint64_t previous = revision;
    int changes = 0;
    for (std::size_t i = 1; i < w->events().size(); ++i) {
        const SseEvent &e = w->events()[i];
        QCOMPARE(e.type, QByteArray("ledger"));
        const std::uint64_t seq = e.data["seq"];
        QCOMPARE(e.id->toULongLong(), seq);
        QVERIFY2(seq > previous, "events come in order, each once");
        previous = seq;
        QVERIFY(e.data["resource"].get<std::string>().rfind("fs:", 0) == 0);
        apply(table, e.data);
        ++changes;
    }
    QCOMPARE(changes, 2000); // each fs: grant and its release; nothing of the locks
    QCOMPARE(table, tableOf(engineLeases("fs:")));
}

void TstWatch::resumesFromLastEventIdWithNothingMissed()
{
    start();
    auto w = watch("");
    QVERIFY(w->waitForEvents(1));
    for (int i = 0; i < 10; ++i)
        acquire("did:agent:a" + std::to_string(i), "src/" + std::to_string(i));
    QVERIFY(w->waitForEvents(11));
    const QByteArray seen = *w->events().back().id;
    w->close();
    // Changes while it is away, then it comes back from where it left off.
    for (int i = 0; i < 10; ++i)
        release("did:agent:a" + std::to_string(i));
    acquire("did:agent:z", "src/z");
    auto again = watch("", kAuth + "Last-Event-ID: " + seen + "\r\n");
    QVERIFY(again->waitForEvents(12));
    QCOMPARE(again->events().front().type, QByteArray("resumed"));
    JCOMPARE(again->events().front().data["from"], seen.toULongLong());
    QVERIFY(!again->events().front().id); // the marker moves no client's revision
    std::uint64_t next = seen.toULongLong() + 1;
    for (std::size_t i = 1; i < again->events().size(); ++i)
        QCOMPARE(again->events()[i].id->toULongLong(), next++);
    QCOMPARE(next - 1, s->host->engine().lastSeq());
    // ?since= does the same for a client without the header.
    auto bySince = watch("?since=" + seen);
    QVERIFY(bySince->waitForEvents(12));
    QCOMPARE(bySince->events().front().type, QByteArray("resumed"));
}

void TstWatch::compactedRevisionGetsAFreshSnapshot_data()
{
    QTest::addColumn<QByteArray>("since");
    QTest::addColumn<QString>("reason");
    QTest::newRow("left the ring") << QByteArray("1") << "compacted";
    QTest::newRow("beyond the last event") << QByteArray("999999") << "future_revision";
}

void TstWatch::compactedRevisionGetsAFreshSnapshot()
{
    QFETCH(QByteArray, since);
    QFETCH(QString, reason);
    ServiceFixture::Setup setup;
    setup.ledgerCapacity = 16;
    start(setup);
    for (int i = 0; i < 20; ++i)
        acquire("did:agent:a", "src/" + std::to_string(i));
    auto w = watch("", kAuth + "Last-Event-ID: " + since + "\r\n");
    QVERIFY(w->waitForEvents(1));
    QCOMPARE(w->events().front().type, QByteArray("snapshot"));
    JCOMPARE(w->events().front().data["reason"], reason.toStdString());
    JCOMPARE(w->events().front().data["revision"], s->host->engine().lastSeq());
    QCOMPARE(w->events().front().data["leases"].size(), 20u);
}

void TstWatch::allEventsIncludeRefusals()
{
    start();
    acquire("did:agent:a", "src/a.ts");
    auto leasesOnly = watch("");
    auto all = watch("?events=all&snapshot=false");
    QVERIFY(leasesOnly->waitForEvents(1) && all->waitForEvents(1));
    // Without a snapshot the stream opens with a heartbeat naming where it starts.
    QCOMPARE(all->events().front().type, QByteArray("heartbeat"));
    acquire("did:agent:b", "src/a.ts"); // refused
    release("did:agent:a");
    QVERIFY(all->waitForEvents(3));
    JCOMPARE(all->events()[1].data["kind"], "coordination.lease.refused");
    JCOMPARE(all->events()[1].data["holder"], "did:agent:a");
    JCOMPARE(all->events()[2].data["kind"], "coordination.lease.released");
    QVERIFY(leasesOnly->waitForEvents(2));
    JCOMPARE(leasesOnly->events()[1].data["kind"], "coordination.lease.released");
}

void TstWatch::eventsWaitUntilDurable()
{
    start();
    store = std::make_unique<FakeStore>();
    s->host->restoreFrom(*store, StoredState{});
    auto w = watch("");
    QVERIFY(w->waitFor([&] { return store->stats().submitted > 0 || w->events().size() > 0; }));
    store->commitAll();
    QVERIFY(w->waitForEvents(1)); // the snapshot, once what it shows is durable
    acquire("did:agent:a", "src/a.ts");
    // Decided and submitted, not durable: nothing is sent.
    QVERIFY(w->waitFor([&] { return store->stats().submitted > store->stats().durable; }));
    const std::uint64_t sent = s->front->watch().stats().events;
    for (int i = 0; i < 20; ++i)
        QCoreApplication::processEvents();
    QCOMPARE(s->front->watch().stats().events, sent);
    QCOMPARE(w->events().size(), 1u);
    store->commitAll();
    QVERIFY(w->waitForEvents(2));
    JCOMPARE(w->events()[1].data["kind"], "coordination.lease.granted");
}

void TstWatch::slowClientIsCutOffOthersUnaffected()
{
    ServiceFixture::Setup setup;
    setup.watch.maxBacklogBytes = 512 << 10;
    start(setup);
    auto fast = watch("");
    auto slow =
        std::make_unique<SseReader>(s->port, QByteArray(RestApi::kBase) + "/watch", kAuth, 4096);
    QVERIFY(fast->waitForEvents(1) && slow->waitForEvents(1));
    slow->pause();
    // Far more than the kernel's socket buffers (4 MiB at most here) and the backlog bound
    // hold: 6 000 events of about 1.2 KB. The fast client reads as they come.
    for (int i = 0; i < 3000; ++i) {
        acquire("did:agent:a", "src/" + std::string(900, 'x') + std::to_string(i));
        release("did:agent:a");
        if (i % 10 == 0)
            QTest::qWait(0);
    }
    QVERIFY2(fast->waitForEvents(6001), qPrintable(QStringLiteral("%1 events, %2 cut off")
                                                       .arg(fast->events().size())
                                                       .arg(s->front->watch().stats().cutSlow)));
    QCOMPARE(fast->events().back().id->toULongLong(), s->host->engine().lastSeq());
    QTRY_COMPARE(s->front->watch().stats().cutSlow, 1u);
    QCOMPARE(s->front->watch().watchers(), 1u);
}

void TstWatch::heartbeatsNameTheRevision()
{
    start();
    acquire("did:agent:a", "src/a.ts");
    auto w = watch("?heartbeatMs=100");
    QVERIFY(w->waitForEvents(2));
    QCOMPARE(w->events()[1].type, QByteArray("heartbeat"));
    QCOMPARE(w->events()[1].id->toULongLong(), s->host->engine().lastSeq());
    JCOMPARE(w->events()[1].data["revision"], s->host->engine().lastSeq());
}

void TstWatch::badQueriesNameTheField_data()
{
    QTest::addColumn<QByteArray>("query");
    QTest::addColumn<QByteArray>("header");
    QTest::addColumn<QString>("field");
    QTest::newRow("events") << QByteArray("?events=some") << QByteArray() << "events";
    QTest::newRow("heartbeat") << QByteArray("?heartbeatMs=5") << QByteArray() << "heartbeatMs";
    QTest::newRow("since") << QByteArray("?since=x") << QByteArray() << "since";
    QTest::newRow("last id") << QByteArray() << QByteArray("Last-Event-ID: -1\r\n")
                             << "Last-Event-ID";
    QTest::newRow("snapshot") << QByteArray("?snapshot=no") << QByteArray() << "snapshot";
    QTest::newRow("prefix") << "?prefix=" + QByteArray(1100, 'a') << QByteArray() << "prefix";
}

void TstWatch::badQueriesNameTheField()
{
    QFETCH(QByteArray, query);
    QFETCH(QByteArray, header);
    QFETCH(QString, field);
    start();
    auto w = watch(query, kAuth + header);
    QVERIFY(w->waitFor([&] { return w->status() != 0 && !w->body().isEmpty(); }));
    QCOMPARE(w->status(), 400);
    QVERIFY2(w->body().contains(field.toUtf8()), w->body().constData());
}

void TstWatch::needsAKeyLikeTheReadRoutes()
{
    start();
    auto w = watch("", {});
    QVERIFY(w->waitFor([&] { return w->status() != 0; }));
    QCOMPARE(w->status(), 401);
}

void TstWatch::aGuardsWatchKeepsItsAgentLive()
{
    start();
    auto plain = watch("");
    QVERIFY(plain->waitForEvents(1));
    QCOMPARE(s->front->presence().surfaces("did:agent:a") & ViaSet(Via::Fs), 0);
    auto gate = watch("?prefix=fs:", kAuth + "X-Leasehold-Via: fs\r\n");
    QVERIFY(gate->waitForEvents(1));
    QVERIFY(s->front->presence().surfaces("did:agent:a") & ViaSet(Via::Fs));
    QVERIFY(s->front->presence().live("did:agent:a"));
    // Gone, it lapses with the live window like any surface.
    gate->close();
    QTRY_COMPARE(s->front->watch().watchers(), 1u);
    s->clock.advance(s->front->presence().windowMs() + 1000);
    s->front->presence().sweep();
    QCOMPARE(s->front->presence().surfaces("did:agent:a") & ViaSet(Via::Fs), 0);
}

QTEST_GUILESS_MAIN(TstWatch)
#include "tst_watch.moc"
