// The engine host with a SQLite store: what one run decided, the next run restores - leases
// with their ids, tokens and deadlines, trust, suspensions, the ledger sequence - and what fell
// due in between expires as "while down". Answers wait for durability.

#include "enginehost.h"
#include "sqlitestore.h"

#include <QTemporaryDir>
#include <QTest>
#include <QThread>

using namespace leasehold;

class TstRestore : public QObject
{
    Q_OBJECT

private slots:
    void init();
    void aSecondRunContinuesTheFirst();
    void leasesDueWhileDownExpireWithTheirTrustEffect();
    void answersWaitForTheirBatch();
    void ledgerPagesReadOffTheEngineThreadSpanStoreAndRing();

private:
    struct Run
    {
        Run(const QString &path, const Clock &clock, std::size_t ledgerRing = 50'000)
            : store(SqliteStore::Options{path})
            , host(EngineConfig{}, &clock, ledgerRing)
        {
            std::string error;
            const std::optional<StoredState> state = store.load(&error);
            if (!state)
                qFatal("load failed: %s", error.c_str());
            restored = host.restoreFrom(store, *state);
        }
        // Waits until everything decided so far is durable.
        // Whether everything so far became durable: QVERIFY(run.settle()).
        [[nodiscard]] bool settle()
        {
            bool done = false;
            host.whenDurable([&](bool) { done = true; });
            if (QTest::qWaitFor([&] { return done; }, 5000))
                return true;
            QTest::qFail("the store did not settle within 5 s", __FILE__, __LINE__);
            return false;
        }
        Grant acquire(const std::string &who, const char *what, std::int64_t ttlMs)
        {
            const AcquireResult r = host.run([&](LeaseEngine &e) {
                return e.acquire({who, {name(what)}, Mode::Write, ttlMs, 0});
            });
            if (!std::holds_alternative<Grant>(r))
                qFatal("not granted");
            return std::get<Grant>(r);
        }
        ResourceName name(const char *text)
        {
            return std::get<ResourceName>(host.parser().parse(text));
        }

        SqliteStore store;
        EngineHost host;
        int restored = 0;
    };

    QString path() const { return dir->filePath(QStringLiteral("leasehold.db")); }

    std::unique_ptr<QTemporaryDir> dir;
    ManualClock clock{1'800'000'000'000};
};

void TstRestore::init()
{
    dir = std::make_unique<QTemporaryDir>();
    QVERIFY(dir->isValid());
}

void TstRestore::aSecondRunContinuesTheFirst()
{
    Grant kept, released;
    std::uint64_t lastSeq = 0;
    {
        Run first(path(), clock);
        QCOMPARE(first.restored, 0);
        kept = first.acquire("did:agent:a", "src/app.cpp", 600'000);
        released = first.acquire("did:agent:b", "lock:deploy", 600'000);
        first.host.run(
            [&](LeaseEngine &e) { e.release("did:agent:b", {first.name("lock:deploy")}); });
        first.host.run([](LeaseEngine &e) { e.suspend("did:op:alice", "did:agent:c", true); });
        QVERIFY(first.settle());
        lastSeq = first.host.ledger(0, 1000).back().seq;
    }
    clock.advance(60'000);
    Run second(path(), clock);
    QCOMPARE(second.restored, 1);
    const std::optional<LeaseInfo> lease = second.host.engine().lease(kept.leases[0].leaseId);
    QVERIFY(lease);
    QCOMPARE(lease->token, kept.leases[0].token);
    QCOMPARE(lease->holder, std::string("did:agent:a"));
    QCOMPARE(lease->expiresAt, kept.leases[0].expiresAt);
    QCOMPARE(second.host.engine().agentState("did:agent:b")->trust, 0.5);
    QVERIFY(second.host.engine().agentState("did:agent:c")->suspended);
    // The restored lease still excludes others; new tokens are above every earlier one.
    const AcquireResult refused = second.host.run([&](LeaseEngine &e) {
        return e.acquire({"did:agent:b", {second.name("src")}, Mode::Write, std::nullopt, 0});
    });
    QVERIFY(std::holds_alternative<Refusal>(refused));
    const Grant next = second.acquire("did:agent:b", "lock:other", 10'000);
    QVERIFY(next.leases[0].token > released.leases[0].token);
    QVERIFY(second.settle());
    // The ledger continues its sequence, and older pages come from the store.
    const std::vector<LedgerEvent> all = second.host.ledger(0, 1000);
    QVERIFY(all.size() >= 5);
    QCOMPARE(all.front().seq, 1u);
    QVERIFY(second.host.ledger(lastSeq, 10).front().seq == lastSeq + 1);
}

void TstRestore::leasesDueWhileDownExpireWithTheirTrustEffect()
{
    std::string leaseId;
    {
        Run first(path(), clock);
        leaseId = first.acquire("did:agent:a", "lock:deploy", 5'000).leases[0].leaseId;
        QVERIFY(first.settle());
    }
    clock.advance(60'000); // the process was down when the lease fell due
    Run second(path(), clock);
    QCOMPARE(second.host.engine().leaseCount(), 0u);
    QCOMPARE(second.host.engine().agentState("did:agent:a")->trust, -5.0);
    const std::vector<LedgerEvent> events = second.host.ledger(0, 100);
    const LedgerEvent &last = events.back();
    QCOMPARE(last.kind, EventKind::Expired);
    QCOMPARE(last.leaseId, leaseId);
    QVERIFY(last.facts.whileDown);
    QVERIFY(second.settle());
    second.host.closeStore();
    Run third(path(), clock);
    QCOMPARE(third.restored, 0); // the expiry itself was made durable
    QCOMPARE(third.host.engine().agentState("did:agent:a")->trust, -5.0);
}

void TstRestore::answersWaitForTheirBatch()
{
    Run run(path(), clock);
    QVERIFY(run.settle());
    bool answered = false;
    run.acquire("did:agent:a", "lock:x", 10'000);
    run.host.whenDurable([&](bool) { answered = true; });
    QVERIFY(!answered); // not before the writer committed the grant
    QTRY_VERIFY(answered);
    QVERIFY(run.store.stats().durable >= run.store.stats().submitted);
}

void TstRestore::ledgerPagesReadOffTheEngineThreadSpanStoreAndRing()
{
    Run run(path(), clock, 10); // the ring keeps 10 events: the rest come from the store
    for (int i = 0; i < 40; ++i) {
        run.acquire("did:agent:a", "lock:x", 30'000);
        run.host.run([&](LeaseEngine &e) { return e.release("did:agent:a", {}); });
    }
    QVERIFY(run.settle());
    const std::uint64_t last = run.host.ledger(0, 100'000).back().seq;
    QVERIFY(last >= 80);
    std::vector<LedgerEvent> page;
    bool done = false;
    QThread *called = nullptr;
    run.host.readLedger(5, 1000, {}, [&](std::vector<LedgerEvent> events) {
        page = std::move(events);
        called = QThread::currentThread();
        done = true;
    });
    QVERIFY(!done); // the store's part is read on its own thread
    QTRY_VERIFY(done);
    QCOMPARE(called, QThread::currentThread()); // and the page is handed over on this one
    QCOMPARE(page.size(), std::size_t(last - 5));
    for (std::size_t i = 0; i < page.size(); ++i)
        QCOMPARE(page[i].seq, 6 + i); // contiguous across the store and the ring
    // A limit inside the store's part, and one filter.
    done = false;
    run.host.readLedger(0, 7, LedgerFilter{"", "", "coordination.lease.granted"},
                        [&](std::vector<LedgerEvent> events) {
                            page = std::move(events);
                            done = true;
                        });
    QTRY_VERIFY(done);
    QCOMPARE(page.size(), std::size_t(7));
    for (const LedgerEvent &e : page)
        QCOMPARE(e.kind, EventKind::Granted);
}

QTEST_MAIN(TstRestore)
#include "tst_restore.moc"
