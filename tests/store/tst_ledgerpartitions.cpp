// The ledger in partitions: paging by sequence and filter, retention by whole partitions,
// sealed partitions moving to the archive, the index each read uses, the agent filters.

#include "actorfilter.h"
#include "ledgerfacts.h"
#include "storefixture.h"

#include <QSqlError>

#include <map>

using namespace leasehold;
using namespace leasehold::storetest;

class TstLedgerPartitions : public QObject, StoreFixture
{
    Q_OBJECT

private slots:
    void init() { freshDirectory(); }
    void ledgerPagesBySequenceAndAgent();
    void retentionKeepsTheNewestRows();
    void retentionDropsWholePartitionsAndReadsHonourTheBounds();
    void aDroppedPartitionIsNotRewritten();
    void anArchivedPartitionRetentionDropsIsNotRewritten();
    void queriesPageAcrossPartitionsWithEveryFilter();
    void aLedgerRowOutsideItsPartitionIsPassedOver();
    void sealedPartitionsMoveToTheArchiveWithTheirIndexes();
    void eachReadUsesTheMostSelectiveIndex();
    void anAgentFilterHoldsItsAgentsAndFewOthers();
};

void TstLedgerPartitions::ledgerPagesBySequenceAndAgent()
{
    SqliteStore store({path()});
    std::string error;
    QVERIFY(store.load(&error));
    StoreOps ops;
    for (std::uint64_t seq = 1; seq <= 50; ++seq)
        ops.add(AppendEvent{storedEvent(seq, seq % 2 ? "did:agent:odd" : "did:agent:even")});
    QVERIFY(commit(store, std::move(ops)));
    std::vector<LedgerEvent> page = store.ledger(10, 5, {});
    QCOMPARE(page.size(), 5u);
    QCOMPARE(page.front().seq, 11u);
    QCOMPARE(page.back().seq, 15u);
    QCOMPARE(page.front().kind, EventKind::Released);
    QCOMPARE(page.front().facts.by, std::string("did:op:11"));
    page = store.ledger(40, 100, {"did:agent:even", {}, {}});
    QCOMPARE(page.size(), 5u);
    for (const LedgerEvent &e : page)
        QCOMPARE(e.seq % 2, 0u);
    QCOMPARE(store.ledger(50, 10, {}).size(), 0u);
    QCOMPARE(store.ledger(0, 100, {{}, "fs:src/a.cpp", "coordination.lease.released"}).size(), 50u);
    QCOMPARE(store.ledger(0, 100, {{}, "fs:src", {}}).size(), 50u); // a folder covers what is below
    QCOMPARE(store.ledger(0, 100, {{}, "fs:sr", {}}).size(), 0u);
    QCOMPARE(store.ledger(0, 100, {{}, "fs:src/a.cpp/b", {}}).size(), 0u);
    QCOMPARE(store.ledger(0, 100, {{}, {}, "coordination.lease.granted"}).size(), 0u);
}

void TstLedgerPartitions::retentionKeepsTheNewestRows()
{
    SqliteStore::Options options{path()};
    options.retainRows = 10;
    options.retainMs = 5000;
    options.retentionEvery = 1;
    SqliteStore store(options);
    std::string error;
    QVERIFY(store.load(&error));
    StoreOps ops;
    for (std::uint64_t seq = 1; seq <= 30; ++seq)
        ops.add(AppendEvent{storedEvent(seq, "a", TimeMs(seq) * 100)});
    QVERIFY(commit(store, std::move(ops)));
    QVERIFY(
        commit(store, {AppendEvent{storedEvent(31, "a", 3100)}})); // the pass after the first batch
    const std::vector<LedgerEvent> left = store.ledger(0, 100, {});
    QCOMPARE(left.size(), 10u);
    QCOMPARE(left.front().seq, 22u);
    QCOMPARE(left.back().seq, 31u);
    // By age: everything older than 5 s before the newest event goes.
    QVERIFY(commit(store, {AppendEvent{storedEvent(32, "a", 3100 + 5000 + 250)}}));
    QVERIFY(commit(store, {AppendEvent{storedEvent(33, "a", 3100 + 5000 + 300)}}));
    const std::vector<LedgerEvent> recent = store.ledger(0, 100, {});
    QCOMPARE(recent.front().seq, 32u);
}

void TstLedgerPartitions::retentionDropsWholePartitionsAndReadsHonourTheBounds()
{
    SqliteStore::Options options{path()};
    options.partitionRows = 10;
    options.retainRows = 25;
    options.retentionEvery = 1;
    SqliteStore store(options);
    std::string error;
    QVERIFY(store.load(&error));
    for (std::uint64_t seq = 1; seq <= 100; seq += 5) {
        StoreOps ops;
        for (std::uint64_t s = seq; s < seq + 5; ++s)
            ops.add(AppendEvent{storedEvent(s, "did:agent:a", TimeMs(s) * 10)});
        QVERIFY(commit(store, std::move(ops)));
    }
    // Partitions 0..6 (seq 1..70) lie wholly beyond the newest 25 and are gone from both files;
    // partition 7 (71..80) straddles the bound: kept, but 71..75 are never shown. The sealed
    // ones are in the archive, the open one in the live file.
    QVERIFY(settle(store, [&] {
        return partitionTables(archive()) == QStringList{"ledger_p00000007", "ledger_p00000008"} &&
               partitionTables(path()) == QStringList{"ledger_p00000009"};
    }));
    QCOMPARE(seqs(store.ledger(0, 1000, {})), range(76, 100));
    QCOMPARE(seqs(store.ledger(70, 3, {})), range(76, 78));
    // By age: retainMs keeps only events within 95 ms of the newest (at 1000).
    store.close();
    options.retainMs = 95;
    SqliteStore aged(options);
    QVERIFY(aged.load(&error));
    QCOMPARE(seqs(aged.ledger(0, 1000, {})), range(91, 100));
}

void TstLedgerPartitions::aDroppedPartitionIsNotRewritten()
{
    // Dropping a partition costs a few pages of writes, not one for each page it had: with
    // SQLite's secure_delete on (Debian's default) every freed page was zeroed and written
    // through the WAL, megabytes a partition, and commits waited behind those writes. The
    // freed pages keep their old bytes until they are reused, which is how this test sees it.
    SqliteStore::Options options{path()};
    options.partitionRows = 200;
    options.retainRows = 200;
    options.retentionEvery = 1;
    const std::string marker(300, 'M');
    {
        SqliteStore store(options);
        std::string error;
        QVERIFY(store.load(&error));
        QVERIFY(commit(store, markedEvents(1, 200, marker)));
        StoreOps next;
        for (std::uint64_t seq = 201; seq <= 600; ++seq)
            next.add(AppendEvent{storedEvent(seq, "did:agent:a")});
        QVERIFY(commit(store, std::move(next)));
        QVERIFY(settle(store, [&] {
            return !partitionTables(path()).contains(QStringLiteral("ledger_p00000000"));
        }));
        QCOMPARE(store.ledger(0, 1, {}).front().seq, 401u);
        store.close();
    }
    QVERIFY2(fileHolds(path(), marker), "the dropped partition's pages were overwritten");
}

void TstLedgerPartitions::anArchivedPartitionRetentionDropsIsNotRewritten()
{
    // The same in the archive: retention drops a partition there every few seconds under load,
    // and zeroing its pages through the archive's WAL took the disk from the writer's commits.
    SqliteStore::Options options{path()};
    options.partitionRows = 200;
    const std::string marker(300, 'A');
    std::string error;
    {
        // First only archived: partition 0 (1..200) is sealed by 201 and moves to the archive.
        SqliteStore store(options);
        QVERIFY(store.load(&error));
        QVERIFY(commit(store, markedEvents(1, 201, marker)));
        QVERIFY(settle(store, [&] {
            return partitionTables(archive()) == QStringList{"ledger_p00000000"} &&
                   partitionTables(path()) == QStringList{"ledger_p00000001"};
        }));
        store.close();
    }
    QVERIFY2(fileHolds(archive(), marker), "the archived partition is not in the archive's file");
    // Then retention keeps only the newest 200 events, and partition 0 goes from the archive.
    options.retainRows = 200;
    options.retentionEvery = 1;
    {
        SqliteStore store(options);
        QVERIFY(store.load(&error));
        StoreOps ops;
        for (std::uint64_t seq = 202; seq <= 600; ++seq)
            ops.add(AppendEvent{storedEvent(seq, "did:agent:a")});
        QVERIFY(commit(store, std::move(ops)));
        QVERIFY(settle(store, [&] {
            return !partitionTables(archive()).contains(QStringLiteral("ledger_p00000000"));
        }));
        QCOMPARE(store.ledger(0, 1, {}).front().seq, 401u);
        store.close();
    }
    QVERIFY2(fileHolds(archive(), marker),
             "the dropped partition's pages were overwritten in the archive");
}

void TstLedgerPartitions::queriesPageAcrossPartitionsWithEveryFilter()
{
    SqliteStore::Options options{path()};
    options.partitionRows = 8;
    SqliteStore store(options);
    std::string error;
    QVERIFY(store.load(&error));
    StoreOps ops;
    for (std::uint64_t seq = 1; seq <= 50; ++seq) {
        LedgerEvent e =
            storedEvent(seq, seq % 2 ? "did:agent:odd" : "did:agent:even", 1000 + TimeMs(seq) * 10);
        e.kind = seq % 3 == 0 ? EventKind::Granted : EventKind::Released;
        e.resource = seq % 5 == 0 ? "fs:src/deep/x.cpp" : seq % 5 == 1 ? "fs:src" : "fs:srcx/y";
        ops.add(AppendEvent{e});
    }
    QVERIFY(commit(store, std::move(ops)));
    // Pages that cross partition boundaries (8 | 9, 16 | 17) are exact.
    QCOMPARE(seqs(store.ledger(6, 5, {})), range(7, 11));
    QCOMPARE(seqs(store.ledger(15, 2, {})), range(16, 17));
    std::vector<std::uint64_t> all;
    for (std::uint64_t since = 0;;) {
        const std::vector<LedgerEvent> page = store.ledger(since, 7, {});
        if (page.empty())
            break;
        for (const LedgerEvent &e : page)
            all.push_back(e.seq);
        since = page.back().seq;
    }
    QCOMPARE(all, range(1, 50));
    QCOMPARE(seqs(store.ledger(0, 100, {"did:agent:even", {}, {}})), range(2, 50, 2));
    QCOMPARE(seqs(store.ledger(20, 3, {"did:agent:odd", {}, {}})),
             (std::vector<std::uint64_t>{21, 23, 25}));
    QCOMPARE(seqs(store.ledger(0, 100, {{}, {}, "coordination.lease.granted"})), range(3, 48, 3));
    // A resource covers itself and what lies below it, never a sibling that shares its prefix.
    std::vector<std::uint64_t> below;
    for (std::uint64_t s = 1; s <= 50; ++s)
        if (s % 5 == 0 || s % 5 == 1)
            below.push_back(s);
    QCOMPARE(seqs(store.ledger(0, 100, {{}, "fs:src", {}})), below);
    QCOMPARE(seqs(store.ledger(0, 100, {{}, "fs:src/deep", {}})), range(5, 50, 5));
    QCOMPARE(seqs(store.ledger(0, 100, {"did:agent:odd", "fs:src", "coordination.lease.released"})),
             (std::vector<std::uint64_t>{1, 5, 11, 25, 31, 35, 41}));
    // From a time: the partitions wholly before it are passed over, the cut inside one is exact,
    // and it combines with paging and the other filters.
    LedgerFilter from;
    from.fromAt = 1000 + 30 * 10;
    QCOMPARE(seqs(store.ledger(0, 100, from)), range(30, 50));
    QCOMPARE(seqs(store.ledger(0, 4, from)), range(30, 33));
    QCOMPARE(seqs(store.ledger(40, 4, from)), range(41, 44));
    from.actor = "did:agent:even";
    from.resource = "fs:src";
    QCOMPARE(seqs(store.ledger(0, 100, from)), (std::vector<std::uint64_t>{30, 36, 40, 46, 50}));
    from = {};
    from.fromAt = 1000 + 51 * 10;
    QVERIFY(store.ledger(0, 100, from).empty());
}

void TstLedgerPartitions::aLedgerRowOutsideItsPartitionIsPassedOver()
{
    SqliteStore::Options options{path()};
    options.partitionRows = 8;
    {
        SqliteStore store(options);
        std::string error;
        QVERIFY(store.load(&error));
        StoreOps ops;
        for (std::uint64_t seq = 1; seq <= 20; ++seq)
            ops.add(AppendEvent{storedEvent(seq, "did:agent:a", 1000 + TimeMs(seq))});
        QVERIFY(commit(store, std::move(ops)));
    }
    // What a damaged page can show: a key no writer put there (40 belongs to partition 4).
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), "edit");
        db.setDatabaseName(path());
        QVERIFY(db.open());
        QSqlQuery q(db);
        QVERIFY2(
            q.exec("INSERT INTO ledger_p00000000 SELECT 40, at, kind, actor, resource, "
                   "lease_id, token, ttl_ms, reason, facts FROM ledger_p00000000 WHERE seq = 1"),
            qPrintable(q.lastError().text()));
    }
    QSqlDatabase::removeDatabase("edit");
    SqliteStore store(options);
    std::string error;
    QVERIFY2(store.load(&error), error.c_str());
    // Readers page by the last sequence they saw: one out of order would end their reading.
    QCOMPARE(seqs(store.ledger(0, 100, {})), range(1, 20));
    QCOMPARE(seqs(store.ledger(0, 9, {})), range(1, 9));
    QCOMPARE(seqs(store.ledger(5, 100, {"did:agent:a", {}, {}})), range(6, 20));
}

void TstLedgerPartitions::sealedPartitionsMoveToTheArchiveWithTheirIndexes()
{
    SqliteStore::Options options{path()};
    options.partitionRows = 10;
    SqliteStore store(options);
    std::string error;
    QVERIFY(store.load(&error));
    StoreOps ops;
    for (std::uint64_t seq = 1; seq <= 25; ++seq) // a in partition 0 only, b in 1 and 2 (open)
        ops.add(AppendEvent{storedEvent(seq, seq <= 10 ? "did:agent:a" : "did:agent:b")});
    QVERIFY(commit(store, std::move(ops)));
    // Sealed partitions move to the archive with their indexes and filters, and the writer
    // drops them from the live file when idle; nudge it with empty batches.
    const QStringList sealed = {"ledger_p00000000_actor",    "ledger_p00000000_kind",
                                "ledger_p00000000_resource", "ledger_p00000001_actor",
                                "ledger_p00000001_kind",     "ledger_p00000001_resource"};
    QVERIFY(settle(store, [&] {
        return partitionTables(archive(), "index") == sealed &&
               partitionTables(path()) == QStringList{"ledger_p00000002"};
    }));
    QVERIFY(partitionTables(path(), "index").isEmpty()); // the live file builds none
    QVERIFY(store.stats().archive);
    QCOMPARE(store.stats().archivedParts, 2u); // what /metrics reports
    QCOMPARE(store.stats().archiveFailures, 0u);
    // Each sealed partition has its agents' filter, and a query for one agent visits the
    // partitions whose filter may hold it and every one without a filter yet (the open one).
    std::map<std::uint64_t, ActorFilter> filters;
    for (const QVariantList &row :
         rows(archive(), QStringLiteral("SELECT part, probes, bits FROM ledger_filters")))
        filters.emplace(row[0].toULongLong(),
                        ActorFilter::fromBytes(row[2].toByteArray().toStdString(), row[1].toInt()));
    QCOMPARE(filters.size(), std::size_t(2));
    QVERIFY(filters.at(0).mayHold("did:agent:a") && !filters.at(0).mayHold("did:agent:b"));
    QVERIFY(filters.at(1).mayHold("did:agent:b") && !filters.at(1).mayHold("did:agent:a"));
    QCOMPARE(seqs(store.ledger(0, 100, {"did:agent:a", {}, {}})), range(1, 10));
    QCOMPARE(seqs(store.ledger(0, 100, {"did:agent:b", {}, {}})), range(11, 25));
    QCOMPARE(seqs(store.ledger(12, 100, {"did:agent:b", {}, {}})), range(13, 25));
    QVERIFY(store.ledger(0, 100, {"did:agent:c", {}, {}}).empty());
}

void TstLedgerPartitions::eachReadUsesTheMostSelectiveIndex()
{
    SqliteStore::Options options{path()};
    options.partitionRows = 4096;
    SqliteStore store(options);
    std::string error;
    QVERIFY(store.load(&error));
    StoreOps ops;
    for (std::uint64_t seq = 1; seq <= 9000; ++seq) { // two sealed partitions and an open one
        LedgerEvent e = storedEvent(seq, "did:agent:" + std::to_string(seq % 50));
        e.resource = "fs:src/" + std::to_string(seq % 300) + ".cpp";
        e.kind = seq % 2 ? EventKind::Granted : EventKind::Released;
        ops.add(AppendEvent{e});
    }
    QVERIFY(commit(store, std::move(ops)));
    QVERIFY(settle(store, [&] { return partitionTables(archive(), "index").size() == 6; }));
    {
        // Each read of a sealed partition goes through one index, the most selective asked
        // for: the agent's, else the resource's, else the kind's (SQLite, left to guess, took
        // the kind's for an agent and a kind).
        const std::vector<std::pair<LedgerFilter, QString>> plans = {
            {{"did:agent:a", "fs:src/7.cpp", "coordination.lease.granted"}, "actor"},
            {{"did:agent:a", {}, "coordination.lease.granted"}, "actor"},
            {{"did:agent:a", "fs:src/7.cpp", {}}, "actor"},
            {{{}, "fs:src/7.cpp", "coordination.lease.granted"}, "resource"},
            {{{}, {}, "coordination.lease.granted"}, "kind"},
        };
        for (const auto &[filter, index] : plans) {
            const QString where = ledgerparts::condition(filter);
            QStringList steps;
            for (const QVariantList &row :
                 rows(archive(),
                      QStringLiteral("EXPLAIN QUERY PLAN SELECT * FROM ledger_p00000001 WHERE %1 "
                                     "ORDER BY seq")
                          .arg(where),
                      QVariantList(where.count(QLatin1Char('?')), QStringLiteral("x"))))
                steps << row[3].toString();
            QVERIFY2(!steps.empty(), qPrintable(where));
            const QString used = QStringLiteral("USING INDEX ledger_p00000001_") + index + " ";
            QVERIFY2(steps.join(QLatin1Char('|')).contains(used) &&
                         std::none_of(steps.begin(), steps.end(),
                                      [&](const QString &step) {
                                          return step.contains(QLatin1String("USING INDEX")) &&
                                                 !step.contains(used);
                                      }),
                     qPrintable(where + QStringLiteral(" -> ") + steps.join(QLatin1Char('|'))));
        }
    }
    // And the reads answer what they should.
    QCOMPARE(
        store.ledger(0, 100, {"did:agent:7", "fs:src/7.cpp", "coordination.lease.granted"}).size(),
        std::size_t(30)); // seq 7, 307, ... 8707
}

void TstLedgerPartitions::anAgentFilterHoldsItsAgentsAndFewOthers()
{
    for (const std::size_t agents : {std::size_t(1), std::size_t(64), std::size_t(5000)}) {
        ActorFilter filter(agents);
        for (std::size_t i = 0; i < agents; ++i)
            filter.add("did:agent:fleet-" + std::to_string(i));
        const ActorFilter stored = ActorFilter::fromBytes(filter.bytes(), ActorFilter::kProbes);
        std::size_t others = 0;
        for (std::size_t i = 0; i < agents; ++i)
            QVERIFY(stored.mayHold("did:agent:fleet-" + std::to_string(i)));
        for (std::size_t i = 0; i < 20'000; ++i)
            others += stored.mayHold("did:agent:other-" + std::to_string(i)) ? 1 : 0;
        QVERIFY2(others < 400, qPrintable(QString::number(others))); // about 1 %, never 2 %
    }
    // A filter that cannot be read holds everything: the partition is visited, not skipped.
    QVERIFY(ActorFilter::fromBytes({}, ActorFilter::kProbes).mayHold("did:agent:x"));
    QVERIFY(ActorFilter::fromBytes("\0\0", 0).mayHold("did:agent:x"));
}

QTEST_MAIN(TstLedgerPartitions)
#include "tst_ledgerpartitions.moc"
