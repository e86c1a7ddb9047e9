// The engine host's alarm: one timer, armed for the engine's earliest deadline, moved only
// earlier. A deadline that moves earlier moves the alarm at once (nothing ends late); one that
// moves later leaves it, and the early alarm re-arms for the true deadline when it fires.
//
// The clock is manual; the alarm is a real timer whose delay is the manual distance to the
// deadline, so each step below waits for the timer itself (QTRY), never a fixed sleep.
//
// With a store, decisions no one waits for (an expiry, a key minted) go to it as the engine
// thread's loop turn ends, under Qt's own dispatcher as the service runs it (app/main.cpp),
// without a timer armed per change.

#include "enginehost.h"

#include "../http/fakestore.h"

#include <QEventLoop>
#include <QTest>
#include <QTimer>

using namespace leasehold;

class TstEngineHost : public QObject
{
    Q_OBJECT

private slots:
    void init();
    void anEarlierDeadlineMovesTheAlarmAtOnce();
    void aLaterDeadlineLeavesTheAlarmWhichReArmsWhenItFires();
    void noDeadlineNoAlarm();
    void theSharedSnapshotIsBuiltOncePerChange();
    void decisionsNoOneWaitsForGoToTheStoreAsTheLoopTurns();

private:
    LeaseInfo acquire(const std::string &who, const char *what, std::int64_t ttlMs)
    {
        const AcquireResult r = host->run([&](LeaseEngine &e) {
            return e.acquire(
                {who, {std::get<ResourceName>(host->parser().parse(what))}, Mode::Write, ttlMs, 0});
        });
        return std::get<Grant>(r).leases.at(0);
    }
    // The deadline the alarm is armed for, or -1 when it is not armed.
    TimeMs armedFor() const { return host->alarmDeadline().value_or(-1); }
    bool held(const std::string &leaseId) const
    {
        return host->engine().lease(leaseId).has_value();
    }

    ManualClock clock;
    std::unique_ptr<EngineHost> host;
};

void TstEngineHost::init()
{
    clock.set(1'700'000'000'000);
    EngineConfig config;
    config.minTtlMs = 10; // short leases keep the real timer's waits short
    host = std::make_unique<EngineHost>(config, &clock);
}

void TstEngineHost::anEarlierDeadlineMovesTheAlarmAtOnce()
{
    const TimeMs t0 = clock.nowMs();
    const LeaseInfo slow = acquire("did:agent:a", "lock:slow", 600'000);
    QCOMPARE(armedFor(), t0 + 600'000);
    const LeaseInfo fast = acquire("did:agent:b", "lock:fast", 50);
    QCOMPARE(armedFor(), t0 + 50);
    clock.advance(50);
    // Only the moved alarm can end it: the old one was ten minutes away.
    QTRY_VERIFY_WITH_TIMEOUT(!held(fast.leaseId), 5000);
    QVERIFY(held(slow.leaseId));
    QCOMPARE(armedFor(), t0 + 600'000);
}

void TstEngineHost::aLaterDeadlineLeavesTheAlarmWhichReArmsWhenItFires()
{
    const TimeMs t0 = clock.nowMs();
    const LeaseInfo first = acquire("did:agent:a", "lock:x", 50);
    QCOMPARE(armedFor(), t0 + 50);
    const LeaseInfo extended = acquire("did:agent:a", "lock:x", 100); // now due at t0 + 100
    QCOMPARE(extended.leaseId, first.leaseId);
    QCOMPARE(armedFor(), t0 + 50); // left where it was
    clock.advance(50);
    // It fires, finds nothing due, and re-arms for the lease's true deadline.
    QTRY_COMPARE_WITH_TIMEOUT(armedFor(), t0 + 100, 5000);
    QVERIFY(held(first.leaseId));
    clock.advance(50);
    QTRY_VERIFY_WITH_TIMEOUT(!held(first.leaseId), 5000);
}

void TstEngineHost::noDeadlineNoAlarm()
{
    const LeaseInfo l = acquire("did:agent:a", "lock:x", 60'000);
    QVERIFY(armedFor() > 0);
    host->run([&](LeaseEngine &e) { return e.release("did:agent:a", {}); });
    QCOMPARE(armedFor(), TimeMs(-1));
}

void TstEngineHost::theSharedSnapshotIsBuiltOncePerChange()
{
    const auto first = host->sharedSnapshot();
    QCOMPARE(host->sharedSnapshot().get(), first.get()); // nothing changed: the same one
    acquire("did:agent:a", "lock:x", 60'000);
    const auto second = host->sharedSnapshot();
    QVERIFY(second.get() != first.get());
    QCOMPARE(second->leases.size(), std::size_t(1));
    QCOMPARE(host->sharedSnapshot().get(), second.get());
    clock.advance(249);
    QCOMPARE(host->sharedSnapshot().get(), second.get());
    clock.advance(1); // old enough that its relative times would mislead: rebuilt
    const auto third = host->sharedSnapshot();
    QVERIFY(third.get() != second.get());
    QCOMPARE(third->at, clock.nowMs());
}

void TstEngineHost::decisionsNoOneWaitsForGoToTheStoreAsTheLoopTurns()
{
    test::FakeStore store;
    host->restoreFrom(store, StoredState{});
    const std::uint64_t restored = store.submittedOps; // the token range this run starts in
    acquire("did:agent:a", "lock:x", 60'000);          // a grant's lease, agent and ledger rows
    QCOMPARE(store.submittedOps, restored); // kept with the rest of this turn's decisions
    QVERIFY(!host->flushArmed());           // and no timer armed for them
    // The loop's turn ends (a real loop, which may wait: QTest's own waits never do).
    QEventLoop loop;
    QTimer watch;
    connect(&watch, &QTimer::timeout, &loop, [&] {
        if (store.submittedOps > restored)
            loop.quit();
    });
    watch.start(1);
    QTimer::singleShot(5000, &loop, &QEventLoop::quit);
    loop.exec();
    QVERIFY(store.submittedOps >= restored + 3);
    QVERIFY(!host->flushArmed());
    host->closeStore();
}

// The service's engine thread runs Qt's own dispatcher (app/main.cpp); GLib's is QtTest's
// default here.
int main(int argc, char *argv[])
{
    qputenv("QT_NO_GLIB", "1");
    QCoreApplication app(argc, argv);
    TstEngineHost test;
    return QTest::qExec(&test, argc, argv);
}
#include "tst_enginehost.moc"
