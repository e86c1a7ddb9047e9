// The store's writer as the engine thread sees it. Group commit: under a stream of decisions
// from a busy engine thread the writer waits out a short window before each batch, so one fsync
// covers more of them; a lone decision is never held back, a full batch does not wait for the
// window to end, and neither does a batch once the engine thread's loop goes idle. And
// the buffers decisions travel in come back to the engine thread for reuse. Durability reaches
// the engine thread at its loop's next turn, waking the loop only when it may be asleep. A WAL
// a long batch grew is cut back once it starts over.

#include "sqlitestore.h"

#include <QAbstractEventDispatcher>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>
#include <QTimer>

#include <cmath>

using namespace leasehold;

class TstStoreWriter : public QObject
{
    Q_OBJECT

private slots:
    void init();
    void aLoneDecisionIsCommittedAtOnce();
    void aStreamSharesItsCommits();
    void aFullBatchDoesNotWaitOutTheWindow();
    void anIdleLoopEndsTheWindow();
    void buffersComeBackForReuse();
    void aBusyLoopLearnsOfDurabilityWithoutAWakeUp();
    void aSleepingLoopIsWoken();
    void anAnswerThatSubmitsAsTheLoopIdlesStillGetsItsWakeUp();
    void theWalIsCutBackOnceItStartsOver();

private:
    struct Opened
    {
        std::unique_ptr<SqliteStore> store;
        std::uint64_t durable = 0;
    };
    // A store on a fresh file with `window`, `maxBatch` and `walLimit` (bytes; 0: the default),
    // loaded, its durable ticket tracked.
    std::unique_ptr<Opened> open(int windowUs, std::size_t maxBatch = 4096, qint64 walLimit = 0)
    {
        auto o = std::make_unique<Opened>();
        SqliteStore::Options options{dir->filePath(QStringLiteral("leasehold.db"))};
        options.commitWindowUs = windowUs;
        options.maxBatch = maxBatch;
        if (walLimit > 0)
            options.walLimitBytes = walLimit;
        o->store = std::make_unique<SqliteStore>(options);
        std::string error;
        if (!o->store->load(&error))
            qWarning("load: %s", error.c_str());
        o->store->setDurableCallback([d = o.get()](std::uint64_t t) { d->durable = t; });
        return o;
    }
    static StoreOps decision(std::uint64_t seq)
    {
        StoreOps ops;
        ops.putAgent("did:agent:a", 1.0, seq, 0, false);
        LedgerEvent e;
        e.seq = seq;
        e.at = TimeMs(seq);
        e.kind = EventKind::Released;
        e.actorDid = "did:agent:a";
        e.resource = "lock:x";
        ops.appendEvent(e);
        return ops;
    }
    // Runs a loop that sleeps whenever it has nothing to do (QTest::qWaitFor's never does)
    // until `ticket` is durable or `timeoutMs` has passed.
    static void sleepUntilDurable(Opened &o, std::uint64_t ticket, int timeoutMs)
    {
        QEventLoop loop;
        o.store->setDurableCallback([&](std::uint64_t t) {
            o.durable = t;
            if (t >= ticket)
                loop.quit();
        });
        QTimer::singleShot(timeoutMs, &loop, &QEventLoop::quit);
        loop.exec();
        o.store->setDurableCallback([d = &o](std::uint64_t t) { d->durable = t; }); // as open()
    }
    // The long batch, then 100 decisions (seq 20 001-20 100) at once, queued behind it; returns
    // the last one's ticket.
    static std::uint64_t queueBehindLongBatch(Opened &o)
    {
        std::uint64_t seq = 0;
        StoreOps bulk = longBatch(seq);
        o.store->submit(bulk);
        std::uint64_t last = 0;
        for (int i = 0; i < 100; ++i) {
            StoreOps ops = decision(++seq);
            last = o.store->submit(ops);
        }
        return last;
    }
    // A batch that takes the writer tens of milliseconds: decisions submitted meanwhile queue
    // up behind it, so the commit after it finds more waiting (a stream), whatever the disk.
    static StoreOps longBatch(std::uint64_t &seq)
    {
        StoreOps ops;
        for (int i = 0; i < 20'000; ++i) {
            LedgerEvent e;
            e.seq = ++seq;
            e.at = TimeMs(seq);
            e.kind = EventKind::Granted;
            e.actorDid = "did:agent:b";
            e.resource = "lock:bulk/" + std::to_string(i);
            ops.appendEvent(e);
        }
        return ops;
    }

    std::unique_ptr<QTemporaryDir> dir;
};

void TstStoreWriter::init()
{
    dir = std::make_unique<QTemporaryDir>();
    QVERIFY(dir->isValid());
}

void TstStoreWriter::aLoneDecisionIsCommittedAtOnce()
{
    // A window far longer than the wait below: were a decision at an idle writer held back
    // for it, the wait would fail.
    auto o = open(60'000'000);
    for (std::uint64_t seq = 1; seq <= 3; ++seq) {
        StoreOps ops = decision(seq);
        const std::uint64_t ticket = o->store->submit(ops);
        QVERIFY(QTest::qWaitFor([&] { return o->durable >= ticket; }, 10'000));
    }
    QCOMPARE(o->store->stats().batches, 3u);
}

void TstStoreWriter::aStreamSharesItsCommits()
{
    constexpr int windowMs = 400;
    auto o = open(windowMs * 1000);
    std::uint64_t seq = 0;
    StoreOps bulk = longBatch(seq);
    o->store->submit(bulk);
    // 100 decisions, one every 2 ms, while the long batch commits and after. The loop turns
    // without sleeping meanwhile (processEvents() never waits), as an engine thread under load
    // does: an idle one would end each window (anIdleLoopEndsTheWindow).
    QElapsedTimer stream;
    stream.start();
    std::uint64_t last = 0;
    for (int i = 0; i < 100; ++i) {
        StoreOps ops = decision(++seq);
        last = o->store->submit(ops);
        QElapsedTimer gap;
        gap.start();
        while (gap.elapsed() < 2)
            QCoreApplication::processEvents();
    }
    const qint64 streamMs = stream.elapsed();
    QVERIFY(QTest::qWaitFor([&] { return o->durable >= last; }, 30'000));
    // The long batch, what queued behind it, then one batch per window while the stream
    // lasted. Committed one by one (no window) they take a batch per fsync: dozens.
    const std::uint64_t bound = 3 + std::uint64_t(std::ceil(double(streamMs) / windowMs));
    const std::uint64_t batches = o->store->stats().batches;
    QVERIFY2(batches <= bound, qPrintable(QStringLiteral("%1 batches for a %2 ms stream, at most "
                                                         "%3 expected")
                                              .arg(batches)
                                              .arg(streamMs)
                                              .arg(bound)));
    // Nothing was lost on the way: every event is in the ledger, in order.
    const std::vector<LedgerEvent> events = o->store->ledger(20'000, 1000, {});
    QCOMPARE(events.size(), 100u);
    QCOMPARE(events.back().seq, seq);
}

void TstStoreWriter::aFullBatchDoesNotWaitOutTheWindow()
{
    // A minute-long window, but each decision (two operations) fills a batch on its own: the
    // writer goes as soon as one is queued, so the stream is durable long before a window
    // could end.
    auto o = open(60'000'000, 2);
    const std::uint64_t last = queueBehindLongBatch(*o);
    QVERIFY(QTest::qWaitFor([&] { return o->durable >= last; }, 20'000));
    QCOMPARE(o->store->ledger(20'000, 1000, {}).size(), 100u);
    QCOMPARE(o->store->stats().batches, 101u); // the long batch, then one per decision
}

void TstStoreWriter::anIdleLoopEndsTheWindow()
{
    // A minute-long window, and a stream: decisions queue up behind the long batch, so the
    // commit after it gathers for the window. Then the loop goes idle (the wait below sleeps):
    // nothing more will come until answers go out, so the writer commits at once.
    auto o = open(60'000'000);
    const std::uint64_t last = queueBehindLongBatch(*o);
    // Woken by the answers or, after 20 s, by the timer: the window alone would last a minute.
    sleepUntilDurable(*o, last, 20'000);
    QCOMPARE(o->durable, last);
    QCOMPARE(o->store->ledger(20'000, 1000, {}).size(), 100u);
    QVERIFY(o->store->stats().batches <= 3u); // the long batch, then what queued behind it
}

void TstStoreWriter::buffersComeBackForReuse()
{
    auto o = open(0);
    StoreOps ops = decision(1);
    const std::size_t capacity = ops.capacity();
    QVERIFY(capacity > 0);
    std::uint64_t ticket = o->store->submit(ops);
    QCOMPARE(ops.capacity(), 0u); // nothing to hand back yet: the writer has not had one
    QVERIFY(QTest::qWaitFor([&] { return o->durable >= ticket; }, 10'000));
    // Committed: its buffer is the next submission's, emptied, with its room.
    StoreOps next = decision(2);
    ticket = o->store->submit(next);
    QVERIFY(next.empty());
    QCOMPARE(next.capacity(), capacity);
    QVERIFY(QTest::qWaitFor([&] { return o->durable >= ticket; }, 10'000));
    // What it is refilled with is written as if it were new.
    LedgerEvent e;
    e.seq = 3;
    e.at = 3;
    e.kind = EventKind::Expired;
    e.actorDid = "did:agent:c";
    e.resource = "lock:y";
    next.appendEvent(e);
    ticket = o->store->submit(next);
    QVERIFY(QTest::qWaitFor([&] { return o->durable >= ticket; }, 10'000));
    const std::vector<LedgerEvent> events = o->store->ledger(0, 10, {});
    QCOMPARE(events.size(), 3u);
    QCOMPARE(events[2].actorDid, std::string("did:agent:c"));
    QCOMPARE(events[2].kind, EventKind::Expired);
}

void TstStoreWriter::aBusyLoopLearnsOfDurabilityWithoutAWakeUp()
{
    // The engine thread's loop turns without ever sleeping (processEvents() never waits), as
    // under load: each turn looks at what became durable, and no commit posts a wake-up.
    auto o = open(0);
    QElapsedTimer waited;
    waited.start();
    for (std::uint64_t seq = 1; seq <= 50; ++seq) {
        StoreOps ops = decision(seq);
        const std::uint64_t ticket = o->store->submit(ops);
        while (o->durable < ticket && waited.elapsed() < 20'000)
            QCoreApplication::processEvents();
        QCOMPARE(o->durable, ticket);
    }
    QCOMPARE(o->store->stats().batches, 50u); // one commit each, every one seen by a turn
    QCOMPARE(o->store->stats().wakes, 0u);
}

void TstStoreWriter::aSleepingLoopIsWoken()
{
    // The long batch commits for tens of milliseconds; the loop is asleep long before it ends,
    // with nothing else to wake it for 30 s: only the writer's wake-up brings the answer.
    auto o = open(0);
    std::uint64_t seq = 0;
    StoreOps bulk = longBatch(seq);
    const std::uint64_t ticket = o->store->submit(bulk);
    sleepUntilDurable(*o, ticket, 30'000);
    QCOMPARE(o->durable, ticket);
    QCOMPARE(o->store->stats().wakes, 1u);
}

void TstStoreWriter::anAnswerThatSubmitsAsTheLoopIdlesStillGetsItsWakeUp()
{
    // A turn of the loop submits the long batch and stays busy until it is committed (so no
    // wake-up is posted for it); it is answered as the loop goes idle (aboutToBlock), and that
    // answer submits one more decision, as a parked wait granted there would. Its commit must
    // wake the loop, which has nothing else to wake it for 30 s. (Nothing is posted to the
    // loop meanwhile: a posted event would wake it by itself.)
    auto o = open(0);
    std::uint64_t seq = 0;
    std::uint64_t first = 0;
    std::uint64_t second = 0;
    QEventLoop loop;
    o->store->setDurableCallback([&](std::uint64_t t) {
        o->durable = t;
        if (first != 0 && t >= first && second == 0) {
            StoreOps ops = decision(++seq);
            second = o->store->submit(ops);
        } else if (second != 0 && t >= second) {
            loop.quit();
        }
    });
    bool armed = false;
    // After the store's own slot, which looks for what became durable as the turn starts.
    connect(QAbstractEventDispatcher::instance(), &QAbstractEventDispatcher::awake, &loop, [&] {
        if (!std::exchange(armed, false))
            return;
        StoreOps bulk = longBatch(seq);
        first = o->store->submit(bulk);
        QElapsedTimer waited;
        waited.start();
        // Counted after the commit's look at whether to wake the loop (none: it is busy).
        while (o->store->stats().batches < 1 && waited.elapsed() < 20'000)
            QThread::yieldCurrentThread();
    });
    QTimer::singleShot(30'000, &loop, &QEventLoop::quit);
    QCoreApplication::processEvents(); // whatever woke the loop before is taken now
    armed = true;
    QElapsedTimer took;
    took.start();
    loop.exec();
    QVERIFY(second != 0);
    QCOMPARE(o->durable, second);
    QVERIFY2(took.elapsed() < 20'000, "the loop slept through the second commit");
    QCOMPARE(o->store->stats().wakes, 1u); // the second commit's, and only it
}

void TstStoreWriter::theWalIsCutBackOnceItStartsOver()
{
    // The long batch is one transaction of megabytes, and the WAL grows to hold it; SQLite
    // would reuse the file at that size for good. Once the checkpoints (the reader thread's,
    // every 200 ms) have copied it, the next commit starts the WAL over and cuts it back.
    constexpr qint64 limit = 64 * 1024;
    auto o = open(250, 4096, limit);
    const QString wal = dir->filePath(QStringLiteral("leasehold.db-wal"));
    std::uint64_t seq = 0;
    StoreOps bulk = longBatch(seq);
    const std::uint64_t ticket = o->store->submit(bulk);
    QVERIFY(QTest::qWaitFor([&] { return o->durable >= ticket; }, 20'000));
    const qint64 grown = QFileInfo(wal).size();
    QVERIFY2(grown > 8 * limit, qPrintable(QStringLiteral("the WAL holds %1 bytes").arg(grown)));
    // Lone decisions, each waited for, until one of them finds the WAL started over.
    qint64 size = grown;
    QElapsedTimer waited;
    waited.start();
    while (size > limit && waited.elapsed() < 10'000) {
        StoreOps ops = decision(++seq);
        const std::uint64_t t = o->store->submit(ops);
        QVERIFY(QTest::qWaitFor([&] { return o->durable >= t; }, 5000));
        QTest::qWait(20); // paces them: the checkpoints come every 200 ms
        size = QFileInfo(wal).size();
    }
    QVERIFY2(size <= limit, qPrintable(QStringLiteral("the WAL still holds %1 bytes of %2 after "
                                                      "%3 decisions")
                                           .arg(size)
                                           .arg(grown)
                                           .arg(seq - 20'000)));
}

// The service's engine thread runs Qt's own dispatcher (app/main.cpp), whose turns the store
// follows; GLib's, QtTest's default here, is not followed.
int main(int argc, char *argv[])
{
    qputenv("QT_NO_GLIB", "1");
    QCoreApplication app(argc, argv);
    TstStoreWriter test;
    return QTest::qExec(&test, argc, argv);
}
#include "tst_storewriter.moc"
