// The ledger archive (ledgerarchive.h): a partition left in both files by a crash between the
// archive's commit and the live file's drop is read once, from the archive, and the live copy
// goes; an archive that cannot be opened stops the start with its name; an archiver held back
// reports its backlog, keeps every read whole and drains once it can write again.

#include "ledgerparts.h"
#include "sqlitestore.h"
#include "storetestkit.h"

#include <QDir>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QTest>

using namespace leasehold;
using namespace leasehold::storetest;

class TstLedgerArchive : public QObject
{
    Q_OBJECT

private slots:
    void init();
    void aPartitionInBothFilesIsReadOnceAndItsLiveCopyDropped();
    void anArchiveThatCannotBeOpenedStopsTheStart();
    void aHeldBackArchiverReportsItsBacklogAndDrains();

private:
    static LedgerEvent event(std::uint64_t seq)
    {
        LedgerEvent e;
        e.seq = seq;
        e.at = 1000;
        e.kind = EventKind::Granted;
        e.actorDid = "did:agent:a";
        e.resource = "fs:src/a.cpp";
        e.reason = "archived";
        return e;
    }
    QString path() const { return dir->filePath(QStringLiteral("leasehold.db")); }
    QString archive() const { return dir->filePath(QStringLiteral("leasehold-ledger.db")); }

    std::unique_ptr<QTemporaryDir> dir;
};

void TstLedgerArchive::init()
{
    dir = std::make_unique<QTemporaryDir>();
    QVERIFY(dir->isValid());
}

void TstLedgerArchive::aPartitionInBothFilesIsReadOnceAndItsLiveCopyDropped()
{
    SqliteStore::Options options{path()};
    options.partitionRows = 10;
    {
        SqliteStore store(options);
        std::string error;
        QVERIFY(store.load(&error));
        StoreOps ops;
        for (std::uint64_t seq = 1; seq <= 15; ++seq)
            ops.add(AppendEvent{event(seq)});
        QVERIFY(commit(store, std::move(ops)));
        QVERIFY(settle(store, [&] {
            return partitionTables(archive()) == QStringList{"ledger_p00000000"} &&
                   partitionTables(path()) == QStringList{"ledger_p00000001"};
        }));
        store.close();
    }
    // A crash after the archive's commit and before the live file's drop: partition 0 in both.
    // The live copy is marked so a read of it shows.
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), "edit");
        db.setDatabaseName(path());
        QSqlQuery q(db);
        QVERIFY(db.open());
        QVERIFY2(q.exec(QStringLiteral("ATTACH DATABASE '%1' AS a").arg(archive())) &&
                     q.exec("CREATE TABLE ledger_p00000000 AS SELECT * FROM a.ledger_p00000000") &&
                     q.exec("UPDATE ledger_p00000000 SET reason = 'live copy'"),
                 qPrintable(q.lastError().text()));
    }
    QSqlDatabase::removeDatabase("edit");
    QCOMPARE(partitionTables(path()), (QStringList{"ledger_p00000000", "ledger_p00000001"}));
    SqliteStore store(options);
    std::string error;
    QVERIFY2(store.load(&error), error.c_str());
    const std::vector<LedgerEvent> events = store.ledger(0, 100, {});
    QCOMPARE(events.size(), std::size_t(15));
    for (const LedgerEvent &e : events) {
        QCOMPARE(e.seq, std::uint64_t(&e - events.data() + 1));
        QCOMPARE(QString::fromStdString(e.reason), QStringLiteral("archived"));
    }
    // The archiver finds the pair and the writer drops the live copy.
    QVERIFY(
        settle(store, [&] { return partitionTables(path()) == QStringList{"ledger_p00000001"}; }));
    QCOMPARE(store.ledger(0, 100, {}).size(), std::size_t(15));
}

void TstLedgerArchive::anArchiveThatCannotBeOpenedStopsTheStart()
{
    QVERIFY(QDir(dir->path()).mkdir(QStringLiteral("leasehold-ledger.db"))); // a directory
    SqliteStore store(SqliteStore::Options{path()});
    std::string error;
    QVERIFY(!store.load(&error));
    QVERIFY2(error.find("leasehold-ledger.db") != std::string::npos, error.c_str());
}

void TstLedgerArchive::aHeldBackArchiverReportsItsBacklogAndDrains()
{
    SqliteStore::Options options{path()};
    options.partitionRows = 10;
    SqliteStore store(options);
    std::string error;
    QVERIFY2(store.load(&error), error.c_str());
    // Another connection holds the archive's write lock: the archiver can read what waits but
    // cannot copy it, as when its disk refuses.
    QSqlDatabase holder = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), "holder");
    holder.setDatabaseName(archive());
    QVERIFY(holder.open());
    QVERIFY(QSqlQuery(holder).exec(QStringLiteral("BEGIN IMMEDIATE")));
    StoreOps ops;
    for (std::uint64_t seq = 1; seq <= 35; ++seq) // partitions 0-2 sealed, 3 open
        ops.add(AppendEvent{event(seq)});
    QVERIFY(commit(store, std::move(ops)));
    QTRY_COMPARE(store.stats().archiveBacklog, std::uint64_t(3)); // what /metrics reports
    QTRY_VERIFY(store.stats().archiveFailures > 0);
    QCOMPARE(store.stats().archivedParts, std::uint64_t(0));
    // The live file keeps every partition meanwhile, and reads are whole.
    QCOMPARE(partitionTables(path()), (QStringList{"ledger_p00000000", "ledger_p00000001",
                                                   "ledger_p00000002", "ledger_p00000003"}));
    QCOMPARE(store.ledger(0, 100, {}).size(), std::size_t(35));
    // Let go: it catches up on its next try and the writer drops the copies from the live file.
    QVERIFY(QSqlQuery(holder).exec(QStringLiteral("ROLLBACK")));
    holder.close();
    holder = QSqlDatabase();
    QSqlDatabase::removeDatabase("holder");
    QVERIFY(settle(store, [&] {
        return store.stats().archiveBacklog == 0 &&
               partitionTables(path()) == QStringList{"ledger_p00000003"};
    }));
    QCOMPARE(store.stats().archivedParts, std::uint64_t(3));
    QCOMPARE(partitionTables(archive()),
             (QStringList{"ledger_p00000000", "ledger_p00000001", "ledger_p00000002"}));
    QCOMPARE(store.ledger(0, 100, {}).size(), std::size_t(35));
}

QTEST_GUILESS_MAIN(TstLedgerArchive)
#include "tst_ledgerarchive.moc"
