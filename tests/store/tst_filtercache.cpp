// The agent filters a reader connection keeps in memory (filtercache.h): what a refresh reads
// and forgets, and a query for one agent through the store's reader thread staying exact while
// partitions are sealed after its filters were first read.

#include "filtercache.h"
#include "ledgerparts.h"
#include "sqlitestore.h"
#include "storetestkit.h"

#include <QSqlDatabase>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QTest>

#include <mutex>

using namespace leasehold;
using namespace leasehold::storetest;
using ledgerparts::FilterCache;

class TstFilterCache : public QObject
{
    Q_OBJECT

private slots:
    void init();
    void aRefreshReadsNewFiltersAndForgetsDroppedOnes();
    void aQueryFindsAnAgentOfPartitionsSealedAfterTheFirstQuery();

private:
    static LedgerEvent event(std::uint64_t seq, const std::string &actor)
    {
        LedgerEvent e;
        e.seq = seq;
        e.at = 1000;
        e.kind = EventKind::Granted;
        e.actorDid = actor;
        e.resource = "fs:src/a.cpp";
        return e;
    }
    // Appends events `first`..`last` (`actor(seq)` each) and waits until the archiver has
    // written the filter of every partition they sealed.
    template<typename Actor>
    [[nodiscard]] bool append(SqliteStore &store, std::uint64_t first, std::uint64_t last,
                              Actor actor)
    {
        StoreOps ops;
        for (std::uint64_t seq = first; seq <= last; ++seq)
            ops.add(AppendEvent{event(seq, actor(seq))});
        if (!commit(store, std::move(ops)))
            return false;
        const auto sealed = qlonglong(ledgerparts::partOf(last, options().partitionRows));
        return settle(store, [&] {
            const QList<QVariantList> found = rows(
                archive(), QStringLiteral("SELECT count(*) FROM ledger_filters WHERE part < ?"),
                {sealed});
            return !found.isEmpty() && found.front().front().toLongLong() == sealed;
        });
    }
    // The store's reader thread's answer to a query for `actor`.
    static QList<quint64> read(SqliteStore &store, const std::string &actor)
    {
        std::mutex mutex;
        std::optional<QList<quint64>> seqs;
        store.readLedger(0, 1000, {actor, {}, {}}, [&](std::vector<LedgerEvent> events) {
            QList<quint64> found;
            for (const LedgerEvent &e : events)
                found.push_back(e.seq);
            std::lock_guard lock(mutex);
            seqs = std::move(found);
        });
        const bool answered = QTest::qWaitFor([&] {
            std::lock_guard lock(mutex);
            return seqs.has_value();
        });
        std::lock_guard lock(mutex);
        if (!answered)
            qWarning("the reader thread did not answer");
        return seqs.value_or(QList<quint64>{~0ull});
    }
    static QList<quint64> range(std::uint64_t first, std::uint64_t last)
    {
        QList<quint64> out;
        for (std::uint64_t s = first; s <= last; ++s)
            out.push_back(s);
        return out;
    }
    QString path() const { return dir->filePath(QStringLiteral("leasehold.db")); }
    QString archive() const { return dir->filePath(QStringLiteral("leasehold-ledger.db")); }
    SqliteStore::Options options() const
    {
        SqliteStore::Options o{path()};
        o.partitionRows = 10;
        return o;
    }

    std::unique_ptr<QTemporaryDir> dir;
};

void TstFilterCache::init()
{
    dir = std::make_unique<QTemporaryDir>();
    QVERIFY(dir->isValid());
}

void TstFilterCache::aRefreshReadsNewFiltersAndForgetsDroppedOnes()
{
    SqliteStore store(options());
    std::string error;
    QVERIFY(store.load(&error));
    // Partitions 0 and 1 sealed (agent a, then b); 2 open.
    QVERIFY(append(store, 1, 25, [](std::uint64_t seq) { return seq <= 10 ? "a" : "b"; }));
    FilterCache cache;
    {
        // A reader's connection: the live file, the archive attached (ledgerarchive.h).
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), "reader");
        db.setDatabaseName(path());
        QVERIFY(db.open());
        QVERIFY(QSqlQuery(db).exec(QStringLiteral("ATTACH DATABASE '%1' AS %2")
                                       .arg(archive(), QLatin1String(ledgerparts::kArchive))));
        QVERIFY(cache.refresh(db, 0));
        QCOMPARE(cache.size(), std::size_t(2));
        QVERIFY(cache.mayHold(0, "a") && !cache.mayHold(0, "b"));
        QVERIFY(cache.mayHold(1, "b") && !cache.mayHold(1, "a"));
        QVERIFY(cache.mayHold(2, "a") && cache.mayHold(2, "b")); // no filter: may hold anyone
        // Partitions 2 and 3 sealed after the first read (agent c): the next refresh has them.
        QVERIFY(append(store, 26, 45, [](std::uint64_t) { return "c"; }));
        QVERIFY(cache.refresh(db, 0));
        QCOMPARE(cache.size(), std::size_t(4));
        QVERIFY(!cache.mayHold(2, "a") && cache.mayHold(2, "c") && !cache.mayHold(3, "b"));
        // Partitions below the oldest one left are forgotten; the rest are kept, not reread.
        QVERIFY(cache.refresh(db, 2));
        QCOMPARE(cache.size(), std::size_t(2));
        QVERIFY(cache.mayHold(0, "b")); // forgotten: may hold anyone again
        QVERIFY(!cache.mayHold(3, "a"));
    }
    QSqlDatabase::removeDatabase("reader");
}

void TstFilterCache::aQueryFindsAnAgentOfPartitionsSealedAfterTheFirstQuery()
{
    SqliteStore store(options());
    std::string error;
    QVERIFY(store.load(&error));
    QVERIFY(append(store, 1, 25, [](std::uint64_t seq) { return seq <= 10 ? "a" : "b"; }));
    QCOMPARE(read(store, "a"), range(1, 10));
    QCOMPARE(read(store, "c"), QList<quint64>{});
    // c's events land in partitions sealed after the reader thread read its filters, and a's
    // again in the newest, open one.
    QVERIFY(append(store, 26, 45, [](std::uint64_t) { return "c"; }));
    QVERIFY(append(store, 46, 48, [](std::uint64_t) { return "a"; }));
    QCOMPARE(read(store, "c"), range(26, 45));
    QList<quint64> a = range(1, 10);
    a << 46 << 47 << 48;
    QCOMPARE(read(store, "a"), a);
    QCOMPARE(read(store, "b"), range(11, 25));
}

QTEST_GUILESS_MAIN(TstFilterCache)
#include "tst_filtercache.moc"
