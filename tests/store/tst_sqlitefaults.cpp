// The SQLite store on a disk that misbehaves, through a fault-injecting VFS under the real SQLite
// (faultvfs.h) and, for a lock, a second real connection: each fault is reported as the store's
// health, nothing is reported durable that is not, the writer recovers on its own once the fault
// clears, and close() returns within its bound whatever the disk does.

#include "faultvfs.h"
#include "sqlitestore.h"

#include <QElapsedTimer>
#include <QTemporaryDir>
#include <QTest>

#include <sqlite3.h>

using namespace leasehold;
using namespace leasehold::test;

class TstSqliteFaults : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void init();
    void cleanup();
    void faultIsReportedAndRecovered_data();
    void faultIsReportedAndRecovered();
    void aFailedOpenIsReportedAndRetried();
    void anotherProcessHoldingTheLockIsReported();
    void closeIsBoundedOnADiskThatKeepsRefusing();
    void slowCommitsAreTimed();

private:
    struct Watched
    {
        std::unique_ptr<SqliteStore> store;
        std::uint64_t durable = 0;
        std::vector<StoreHealth> reports;
    };
    std::unique_ptr<Watched> open(int closeTimeoutMs = 3000)
    {
        auto w = std::make_unique<Watched>();
        SqliteStore::Options options{path()};
        options.retryMaxMs = 50; // recovery is noticed quickly; the policy is the same
        options.closeTimeoutMs = closeTimeoutMs;
        w->store = std::make_unique<SqliteStore>(options);
        std::string error;
        if (!w->store->load(&error))
            qFatal("load failed: %s", error.c_str());
        Watched *raw = w.get();
        w->store->setDurableCallback([raw](std::uint64_t t) { raw->durable = t; });
        w->store->setHealthCallback([raw](const StoreHealth &h) { raw->reports.push_back(h); });
        return w;
    }
    static std::uint64_t submitLease(SqliteStore &store, const std::string &id)
    {
        StoreOps ops;
        LeaseInfo l;
        l.leaseId = id;
        l.resource = "lock:" + id;
        l.holder = "did:agent:a";
        l.token = 7;
        l.grantedAt = 1000;
        l.expiresAt = 60'000;
        l.ttlMs = 59'000;
        ops.putLease(l);
        return store.submit(ops);
    }
    QString path() const { return dir->filePath(QStringLiteral("leasehold.db")); }

    std::unique_ptr<QTemporaryDir> dir;
    Faults *faults = nullptr;
};

void TstSqliteFaults::initTestCase()
{
    faults = &installFaultVfs();
}

void TstSqliteFaults::init()
{
    faults->clear();
    dir = std::make_unique<QTemporaryDir>();
    QVERIFY(dir->isValid());
}

void TstSqliteFaults::cleanup()
{
    faults->clear();
}

void TstSqliteFaults::faultIsReportedAndRecovered_data()
{
    QTest::addColumn<int>("writeError");
    QTest::addColumn<int>("syncError");
    QTest::addColumn<StoreHealth::Problem>("problem");
    QTest::newRow("disk full") << SQLITE_FULL << 0 << StoreHealth::Problem::DiskFull;
    QTest::newRow("EIO on write") << SQLITE_IOERR_WRITE << 0 << StoreHealth::Problem::IoError;
    QTest::newRow("EIO on fsync") << 0 << SQLITE_IOERR_FSYNC << StoreHealth::Problem::IoError;
    QTest::newRow("read-only") << SQLITE_READONLY << 0 << StoreHealth::Problem::ReadOnly;
}

void TstSqliteFaults::faultIsReportedAndRecovered()
{
    QFETCH(int, writeError);
    QFETCH(int, syncError);
    QFETCH(StoreHealth::Problem, problem);
    std::unique_ptr<Watched> w = open();
    const std::uint64_t before = submitLease(*w->store, "before");
    QTRY_VERIFY(w->durable >= before);

    faults->writeError = writeError;
    faults->syncError = syncError;
    const std::uint64_t ticket = submitLease(*w->store, "during");
    QTRY_VERIFY(!w->reports.empty());
    QCOMPARE(w->reports.back().problem, problem);
    QCOMPARE(w->store->health().problem, problem);
    QVERIFY(w->durable < ticket); // never reported durable while the disk refuses
    QVERIFY(w->store->stats().failedBatches > 0);

    faults->clear();
    QTRY_VERIFY(w->durable >= ticket);
    QTRY_VERIFY(w->reports.back().ok());
    QVERIFY(w->store->health().ok());
    w.reset();

    // Nothing acknowledged was lost: both leases are there after a reopen.
    SqliteStore again(SqliteStore::Options{path()});
    std::string error;
    const std::optional<StoredState> state = again.load(&error);
    QVERIFY2(state, error.c_str());
    QCOMPARE(state->leases.size(), std::size_t(2));
}

void TstSqliteFaults::aFailedOpenIsReportedAndRetried()
{
    std::unique_ptr<Watched> w = open();
    // The writer opens its connection with its first batch: make that open fail.
    faults->openError = SQLITE_CANTOPEN;
    const std::uint64_t ticket = submitLease(*w->store, "x");
    QTRY_VERIFY(!w->reports.empty());
    QCOMPARE(w->reports.back().problem, StoreHealth::Problem::CannotOpen);
    faults->clear();
    QTRY_VERIFY(w->durable >= ticket);
    QTRY_VERIFY(w->store->health().ok());
}

void TstSqliteFaults::anotherProcessHoldingTheLockIsReported()
{
    std::unique_ptr<Watched> w = open();
    const std::uint64_t first = submitLease(*w->store, "first");
    QTRY_VERIFY(w->durable >= first);
    // A second connection (as another process would) takes the write lock and keeps it.
    sqlite3 *other = nullptr;
    QCOMPARE(sqlite3_open(path().toUtf8().constData(), &other), SQLITE_OK);
    QCOMPARE(sqlite3_exec(other, "BEGIN EXCLUSIVE", nullptr, nullptr, nullptr), SQLITE_OK);
    const std::uint64_t ticket = submitLease(*w->store, "second");
    QTRY_VERIFY(!w->reports.empty());
    QCOMPARE(w->reports.back().problem, StoreHealth::Problem::Locked);
    QVERIFY(w->durable < ticket);
    QCOMPARE(sqlite3_exec(other, "COMMIT", nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(other);
    QTRY_VERIFY(w->durable >= ticket);
    QTRY_VERIFY(w->store->health().ok());
}

void TstSqliteFaults::closeIsBoundedOnADiskThatKeepsRefusing()
{
    std::unique_ptr<Watched> w = open(300);
    faults->writeError = SQLITE_FULL;
    const std::uint64_t ticket = submitLease(*w->store, "never");
    QTRY_VERIFY(!w->reports.empty());
    QElapsedTimer took;
    took.start();
    w->store->close();
    // The bound is 300 ms of retrying; the margin covers one back-off step and thread exit.
    QVERIFY2(took.elapsed() < 2000, qPrintable(QString::number(took.elapsed())));
    QVERIFY(!w->store->writerStuck());
    QVERIFY(w->durable < ticket);
    QCOMPARE(w->store->stats().lostOps, std::uint64_t(1));
}

void TstSqliteFaults::slowCommitsAreTimed()
{
    std::unique_ptr<Watched> w = open();
    const std::uint64_t first = submitLease(*w->store, "fast");
    QTRY_VERIFY(w->durable >= first);
    // Every commit is timed (the writer counts its batch a moment after reporting it durable).
    QTRY_COMPARE(w->store->stats().commitTimes.count, w->store->stats().batches);
    const StoreStats before = w->store->stats();

    // Every commit fsyncs its WAL at least once, so each now takes 60 ms or more.
    faults->syncDelayMs = 60;
    const std::uint64_t ticket = submitLease(*w->store, "slow");
    QTRY_VERIFY(w->durable >= ticket);
    faults->clear();
    QTRY_COMPARE(w->store->stats().commitTimes.count, w->store->stats().batches);
    const StoreStats after = w->store->stats();
    const std::uint64_t slow = after.commitTimes.count - before.commitTimes.count;
    QVERIFY(slow >= 1);
    // None of them in a bucket below 50 ms; their time in the sum.
    for (std::size_t i = 0; i < CommitTimes::kBounds.size() && CommitTimes::kBounds[i] < 0.06; ++i)
        QCOMPARE(after.commitTimes.buckets[i], before.commitTimes.buckets[i]);
    QVERIFY(after.commitTimes.sumSeconds - before.commitTimes.sumSeconds >= 0.06 * double(slow));
}

QTEST_GUILESS_MAIN(TstSqliteFaults)
#include "tst_sqlitefaults.moc"
