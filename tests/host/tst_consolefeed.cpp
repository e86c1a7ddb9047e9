// The console feed on the engine thread: a burst of decisions becomes one frame carrying every
// event in order (not a frame per event), frames are spaced by the rate limit, a burst larger
// than a frame carries keeps its newest events and counts the rest, and an idle engine still
// publishes a heartbeat so counters and liveness stay current.

#include "consolefeed.h"
#include "enginehost.h"

#include <QElapsedTimer>
#include <QSignalSpy>
#include <QTest>

using namespace leasehold;

namespace {

AcquireRequest request(const std::string &actor, const std::string &path)
{
    AcquireRequest r;
    r.actor = actor;
    r.resources.push_back(std::get<ResourceName>(ResourceParser("/w").parse(path)));
    return r;
}

ConsoleFramePtr frameOf(const QSignalSpy &spy, int i)
{
    return spy.at(i).at(0).value<ConsoleFramePtr>();
}

} // namespace

class TstConsoleFeed : public QObject
{
    Q_OBJECT

private slots:
    void burstBecomesOneFrameWithEveryEvent();
    void framesAreSpacedByTheRate();
    void oversizedBurstKeepsTheNewest();
    void idleEngineStillPublishes();
};

void TstConsoleFeed::burstBecomesOneFrameWithEveryEvent()
{
    ManualClock clock;
    EngineHost host(EngineConfig{}, &clock);
    ConsoleFeed feed(host, [] {
        ServiceFacts f;
        f.listenUrl = QStringLiteral("http://127.0.0.1:1");
        return f;
    });
    QSignalSpy spy(&feed, &ConsoleFeed::framePublished);
    for (int i = 0; i < 500; ++i)
        host.run(
            [&](LeaseEngine &e) { e.acquire(request("did:agent:a", "f" + std::to_string(i))); });
    QVERIFY(spy.wait(2000));
    QCOMPARE(spy.count(), 1);
    const ConsoleFramePtr f = frameOf(spy, 0);
    QCOMPARE(f->events.size(), 500u);
    for (std::size_t i = 1; i < f->events.size(); ++i)
        QVERIFY(f->events[i].seq == f->events[i - 1].seq + 1);
    QCOMPARE(f->snapshot.leases.size(), 500u);
    QCOMPARE(f->eventsSkipped, 0u);
    QCOMPARE(f->facts.listenUrl, QStringLiteral("http://127.0.0.1:1"));
}

void TstConsoleFeed::framesAreSpacedByTheRate()
{
    ManualClock clock;
    EngineHost host(EngineConfig{}, &clock);
    ConsoleFeed feed(host, {}, 10);
    QSignalSpy spy(&feed, &ConsoleFeed::framePublished);
    host.run([&](LeaseEngine &e) { e.acquire(request("did:agent:a", "x")); });
    QVERIFY(spy.wait(2000));
    QElapsedTimer sinceFirst;
    sinceFirst.start();
    host.run([&](LeaseEngine &e) { e.acquire(request("did:agent:b", "y")); });
    QVERIFY(spy.wait(2000));
    // The second change waited for the next slot: at most ten frames a second.
    QVERIFY2(sinceFirst.elapsed() >= 90, qPrintable(QString::number(sinceFirst.elapsed())));
    QCOMPARE(frameOf(spy, 1)->events.size(), 1u);
    QCOMPARE(frameOf(spy, 1)->number, frameOf(spy, 0)->number + 1);
}

void TstConsoleFeed::oversizedBurstKeepsTheNewest()
{
    ManualClock clock;
    EngineHost host(EngineConfig{}, &clock);
    ConsoleFeed feed(host, {}, 10, 100);
    QSignalSpy spy(&feed, &ConsoleFeed::framePublished);
    host.run([&](LeaseEngine &e) {
        for (int i = 0; i < 1000; ++i)
            e.acquire(request("did:agent:a", "f" + std::to_string(i)));
    });
    QVERIFY(spy.wait(2000));
    const ConsoleFramePtr f = frameOf(spy, 0);
    QCOMPARE(f->events.size(), 100u);
    QCOMPARE(f->eventsSkipped, 900u);
    QCOMPARE(f->events.back().seq, f->snapshot.lastSeq); // the newest are the ones kept
}

void TstConsoleFeed::idleEngineStillPublishes()
{
    ManualClock clock;
    EngineHost host(EngineConfig{}, &clock);
    ConsoleFeed feed(host, {});
    QSignalSpy spy(&feed, &ConsoleFeed::framePublished);
    QVERIFY(spy.wait(3000)); // the once-a-second heartbeat, with nothing recorded
    QVERIFY(frameOf(spy, 0)->events.empty());
}

QTEST_MAIN(TstConsoleFeed)
#include "tst_consolefeed.moc"
