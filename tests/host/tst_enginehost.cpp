// The engine host's alarm: one timer, armed for the engine's earliest deadline, moved only
// earlier. A deadline that moves earlier moves the alarm at once (nothing ends late); one that
// moves later leaves it, and the early alarm re-arms for the true deadline when it fires.
//
// The clock is manual; the alarm is a real timer whose delay is the manual distance to the
// deadline, so each step below waits for the timer itself (QTRY), never a fixed sleep.
//
// With a store, what a turn of the engine thread's loop decided goes to it as the turn ends
// (aboutToBlock, under Qt's own dispatcher as the service runs it: app/main.cpp): one
// submission for all the answers waiting for it, no timer armed per change, and nothing left
// behind by what the signal's later slots decide.

#include "enginehost.h"

#include "../http/fakestore.h"

#include <QAbstractEventDispatcher>
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
    void aTurnsAnswersShareOneSubmission();
    void whatALaterSlotDecidesGoesBeforeTheLoopSleeps();

private:
    LeaseInfo acquire(const std::string &who, const char *what, std::int64_t ttlMs)
    {
        const AcquireResult r = host->run([&](LeaseEngine &e) {
            return e.acquire(
                {who, {std::get<ResourceName>(host->parser().parse(what))}, Mode::Write, ttlMs, 0});
        });
        return std::get<Grant>(r).leases.at(0);
    }
    // Runs a real event loop (whose turns end in aboutToBlock(): QTest's own waits never
    // reach it) until `done` holds, looking every millisecond, for at most 5 s.
    static void runLoopUntil(const std::function<bool()> &done)
    {
        QEventLoop loop;
        QTimer watch;
        connect(&watch, &QTimer::timeout, &loop, [&] {
            if (done())
                loop.quit();
        });
        watch.start(1);
        QTimer::singleShot(5000, &loop, &QEventLoop::quit);
        loop.exec();
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
    // The loop's turn ends.
    runLoopUntil([&] { return store.submittedOps > restored; });
    QVERIFY(store.submittedOps >= restored + 3);
    QVERIFY(!host->flushArmed());
    host->closeStore();
}

void TstEngineHost::aTurnsAnswersShareOneSubmission()
{
    test::FakeStore store;
    store.autoCommit = true; // durable as soon as submitted
    host->restoreFrom(store, StoredState{});
    const std::uint64_t submissions = store.stats().submitted;
    int answered = 0;
    acquire("did:agent:a", "lock:x", 60'000);
    host->whenDurable([&](bool durable) { answered += durable ? 1 : 100; });
    acquire("did:agent:b", "lock:y", 60'000);
    host->whenDurable([&](bool durable) { answered += durable ? 1 : 100; });
    QCOMPARE(store.stats().submitted, submissions); // both wait for the turn's end
    QCOMPARE(answered, 0);
    runLoopUntil([&] { return answered >= 2; });
    QCOMPARE(answered, 2);
    QCOMPARE(store.stats().submitted, submissions + 1);
    host->closeStore();
}

void TstEngineHost::whatALaterSlotDecidesGoesBeforeTheLoopSleeps()
{
    // A slot of aboutToBlock() after the host's own (as the store's is, whose answers may
    // grant a parked wait) decides a change and waits for it: it is submitted then, not left
    // for a turn that nothing starts for 5 s. (Nothing is posted to the loop meanwhile: a
    // posted event would start one by itself.)
    test::FakeStore store;
    store.autoCommit = true;
    QEventLoop loop;
    bool armed = false;
    bool answered = false;
    connect(QAbstractEventDispatcher::instance(), &QAbstractEventDispatcher::aboutToBlock, &loop,
            [&] {
                if (!std::exchange(armed, false))
                    return;
                acquire("did:agent:a", "lock:x", 60'000);
                host->whenDurable([&](bool durable) {
                    answered = durable;
                    loop.quit();
                });
            });
    host->restoreFrom(store, StoredState{}); // its last slot comes after the one above
    QTimer::singleShot(5000, &loop, &QEventLoop::quit);
    QCoreApplication::processEvents(); // whatever woke the loop before is taken now
    armed = true;
    loop.exec();
    QVERIFY(!armed);
    QVERIFY(answered);
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
