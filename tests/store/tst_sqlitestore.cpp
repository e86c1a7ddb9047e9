// The SQLite store against a temporary directory: round trips across a reopen, ledger paging
// and retention, bounded ledger queueing, and files that are not (or not our) databases.

#include "actorfilter.h"
#include "ledgerfacts.h"
#include "ledgerparts.h"
#include "sqlitestore.h"
#include "storetestkit.h"

#include <QFile>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QTest>

#include <map>

using namespace leasehold;
using namespace leasehold::storetest;

class TstSqliteStore : public QObject
{
    Q_OBJECT

private slots:
    void init();
    void stateSurvivesAReopen();
    void onlyTheLastWordInABatchIsWritten();
    void ledgerPagesBySequenceAndAgent();
    void retentionKeepsTheNewestRows();
    void ledgerEventsBeyondTheBoundAreDroppedAndCounted();
    void aFileThatIsNotADatabaseIsRefused();
    void aForeignDatabaseIsRefusedAndLeftAlone();
    void aSchemaOneLedgerIsCarriedForward();
    void retentionDropsWholePartitionsAndReadsHonourTheBounds();
    void aDroppedPartitionIsNotRewritten();
    void anArchivedPartitionRetentionDropsIsNotRewritten();
    void queriesPageAcrossPartitionsWithEveryFilter();
    void aLedgerRowOutsideItsPartitionIsPassedOver();
    void sealedPartitionsMoveToTheArchiveWithTheirIndexes();
    void eachReadUsesTheMostSelectiveIndex();
    void anAgentFilterHoldsItsAgentsAndFewOthers();
    void aSchemaTwoLedgerIsMovedIntoPartitions();
    void databasesOfEarlierReleasesAreBroughtUpToDate();
    void damagedStateIsRefusedButNotADamagedLedgerPage();
    void impossibleRowsAreDroppedAndAnImpossibleTokenMarkRefused();

private:
    // Overwrites the b-tree header of `table`'s root page with 0xff bytes.
    [[nodiscard]] bool damage(const QString &table)
    {
        int page = 0;
        int pageSize = 0;
        {
            QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), "damage");
            db.setDatabaseName(path());
            QSqlQuery q(db);
            if (!db.open() || !q.exec("PRAGMA wal_checkpoint(TRUNCATE)") ||
                !q.exec("SELECT rootpage FROM sqlite_master WHERE name = '" + table + "'") ||
                !q.next())
                return false;
            page = q.value(0).toInt();
            if (!q.exec("PRAGMA page_size") || !q.next())
                return false;
            pageSize = q.value(0).toInt();
        }
        QSqlDatabase::removeDatabase("damage");
        QFile f(path());
        return page > 1 && f.open(QIODevice::ReadWrite) && f.seek(qint64(page - 1) * pageSize) &&
               f.write(QByteArray(12, '\xff')) == 12;
    }
    QString path() const { return dir->filePath(QStringLiteral("leasehold.db")); }
    QString archive() const { return dir->filePath(QStringLiteral("leasehold-ledger.db")); }
    static LedgerEvent event(std::uint64_t seq, const std::string &actor, TimeMs at = 1000)
    {
        LedgerEvent e;
        e.seq = seq;
        e.at = at;
        e.kind = EventKind::Released;
        e.actorDid = actor;
        e.resource = "fs:src/a.cpp";
        e.reason = "release";
        e.facts.by = "did:op:" + std::to_string(seq);
        return e;
    }

    // Events first..last whose resources carry `marker`, so their pages can be found in a file.
    static StoreOps markedEvents(std::uint64_t first, std::uint64_t last, const std::string &marker)
    {
        StoreOps ops;
        for (std::uint64_t seq = first; seq <= last; ++seq) {
            LedgerEvent e = event(seq, "did:agent:a");
            e.resource = "lock:" + marker + std::to_string(seq);
            ops.add(AppendEvent{e});
        }
        return ops;
    }

    std::unique_ptr<QTemporaryDir> dir;
};

void TstSqliteStore::init()
{
    dir = std::make_unique<QTemporaryDir>();
    QVERIFY(dir->isValid());
}

void TstSqliteStore::onlyTheLastWordInABatchIsWritten()
{
    LeaseInfo first{"ls_1", "fs:a", "did:agent:a", Mode::Write, 7, 1000, 31000, 30000};
    LeaseInfo extended = first;
    extended.expiresAt = 91000;
    extended.ttlMs = 90000;
    const LeaseInfo brief{"ls_2", "lock:x", "did:agent:b", Mode::Write, 8, 1000, 31000, 30000};
    {
        SqliteStore store({path()});
        std::string error;
        QVERIFY(store.load(&error));
        // One batch: ls_1 granted then extended; ls_2 granted and released; an agent touched
        // three times. What is left is each one's last word.
        QVERIFY(commit(store, {PutLease{first}, PutAgent{{"did:agent:a", 0.5, 1, 0, false}},
                               PutLease{brief}, PutLease{extended}, DropLease{"ls_2"},
                               PutAgent{{"did:agent:a", 1.0, 2, 0, false}},
                               PutAgent{{"did:agent:a", 1.5, 3, 0, true}}}));
    }
    SqliteStore reopened({path()});
    std::string error;
    const std::optional<StoredState> state = reopened.load(&error);
    QVERIFY2(state, error.c_str());
    QCOMPARE(state->leases.size(), 1u);
    QCOMPARE(state->leases[0].leaseId, std::string("ls_1"));
    QCOMPARE(state->leases[0].expiresAt, 91000);
    QCOMPARE(state->leases[0].ttlMs, 90000);
    QCOMPARE(state->agents.size(), 1u);
    QCOMPARE(state->agents[0].trust, 1.5);
    QCOMPARE(state->agents[0].releases, 3u);
    QVERIFY(state->agents[0].suspended);
}

void TstSqliteStore::stateSurvivesAReopen()
{
    LeaseInfo kept{"ls_1", "fs:src/a.cpp", "did:agent:a", Mode::Write, 7, 1000, 61000, 60000};
    LeaseInfo gone{"ls_2", "lock:x", "did:agent:b", Mode::Read, 8, 1000, 31000, 30000};
    {
        SqliteStore store({path()});
        std::string error;
        const std::optional<StoredState> empty = store.load(&error);
        QVERIFY2(empty, error.c_str());
        QCOMPARE(empty->leases.size(), 0u);
        QCOMPARE(empty->tokenEnd, 1u);
        QVERIFY(commit(store, {PutLease{kept}, PutLease{gone}, ReserveTokens{4097}}));
        QVERIFY(
            commit(store, {DropLease{"ls_2"}, PutAgent{{"did:agent:b", 0.5, 1, 0, false}},
                           PutAgent{{"did:agent:c", -5, 0, 1, true}}, AppendEvent{event(41, "b")},
                           PutKey{{std::string(64, 'a'), "did:agent:new", "agent", 5000}}}));
        kept.expiresAt = 91000; // an extension replaces the row
        QVERIFY(commit(store, {PutLease{kept}, ReserveTokens{100}})); // a lower end never lowers it
    }
    SqliteStore store({path()});
    std::string error;
    const std::optional<StoredState> state = store.load(&error);
    QVERIFY2(state, error.c_str());
    QCOMPARE(state->leases.size(), 1u);
    const LeaseInfo &l = state->leases[0];
    QCOMPARE(l.leaseId, std::string("ls_1"));
    QCOMPARE(l.resource, std::string("fs:src/a.cpp"));
    QCOMPARE(l.holder, std::string("did:agent:a"));
    QCOMPARE(l.token, 7u);
    QCOMPARE(l.expiresAt, 91000);
    QCOMPARE(l.ttlMs, 60000);
    QCOMPARE(state->tokenEnd, 4097u);
    QCOMPARE(state->lastSeq, 41u);
    QCOMPARE(state->agents.size(), 2u);
    for (const AgentState &a : state->agents) {
        if (a.actorDid == "did:agent:c") {
            QCOMPARE(a.trust, -5.0);
            QCOMPARE(a.expiries, 1u);
            QVERIFY(a.suspended);
        }
    }
    // A minted key comes back as its digest, never as the key.
    QCOMPARE(state->keys.size(), 1u);
    QCOMPARE(state->keys[0].digestHex, std::string(64, 'a'));
    QCOMPARE(state->keys[0].did, std::string("did:agent:new"));
    QCOMPARE(state->keys[0].role, std::string("agent"));
    QCOMPARE(state->keys[0].createdAt, 5000);
}

void TstSqliteStore::ledgerPagesBySequenceAndAgent()
{
    SqliteStore store({path()});
    std::string error;
    QVERIFY(store.load(&error));
    StoreOps ops;
    for (std::uint64_t seq = 1; seq <= 50; ++seq)
        ops.add(AppendEvent{event(seq, seq % 2 ? "did:agent:odd" : "did:agent:even")});
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

void TstSqliteStore::retentionKeepsTheNewestRows()
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
        ops.add(AppendEvent{event(seq, "a", TimeMs(seq) * 100)});
    QVERIFY(commit(store, std::move(ops)));
    QVERIFY(commit(store, {AppendEvent{event(31, "a", 3100)}})); // the pass after the first batch
    const std::vector<LedgerEvent> left = store.ledger(0, 100, {});
    QCOMPARE(left.size(), 10u);
    QCOMPARE(left.front().seq, 22u);
    QCOMPARE(left.back().seq, 31u);
    // By age: everything older than 5 s before the newest event goes.
    QVERIFY(commit(store, {AppendEvent{event(32, "a", 3100 + 5000 + 250)}}));
    QVERIFY(commit(store, {AppendEvent{event(33, "a", 3100 + 5000 + 300)}}));
    const std::vector<LedgerEvent> recent = store.ledger(0, 100, {});
    QCOMPARE(recent.front().seq, 32u);
}

void TstSqliteStore::ledgerEventsBeyondTheBoundAreDroppedAndCounted()
{
    SqliteStore::Options options{path()};
    options.maxQueuedEvents = 10;
    SqliteStore store(options);
    std::string error;
    QVERIFY(store.load(&error));
    StoreOps burst;
    for (std::uint64_t seq = 1; seq <= 1000; ++seq)
        burst.add(AppendEvent{event(seq, "a")});
    LeaseInfo lease{"ls_1", "lock:x", "did:agent:a", Mode::Write, 1, 0, 60000, 60000};
    burst.add(PutLease{lease}); // state is never dropped
    QVERIFY(commit(store, std::move(burst)));
    const StoreStats stats = store.stats();
    QCOMPARE(stats.droppedEvents, 990u);
    QCOMPARE(store.ledger(0, 2000, {}).size(), 10u);
    store.close();
    SqliteStore reopened({path()});
    QCOMPARE(reopened.load(&error)->leases.size(), 1u);
}

void TstSqliteStore::aFileThatIsNotADatabaseIsRefused()
{
    QFile junk(path());
    QVERIFY(junk.open(QIODevice::WriteOnly));
    const QByteArray garbage = QByteArray("this is not SQLite at all\n").repeated(200);
    junk.write(garbage);
    junk.close();
    SqliteStore store({path()});
    std::string error;
    QVERIFY(!store.load(&error));
    QVERIFY2(error.find("not a usable SQLite database") != std::string::npos, error.c_str());
    QFile check(path());
    QVERIFY(check.open(QIODevice::ReadOnly));
    QCOMPARE(check.readAll(), garbage); // left untouched
}

void TstSqliteStore::aForeignDatabaseIsRefusedAndLeftAlone()
{
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("x"));
        db.setDatabaseName(path());
        QVERIFY(db.open());
        QSqlQuery(db).exec(QStringLiteral("CREATE TABLE invoices (id INTEGER)"));
        QSqlQuery(db).exec(QStringLiteral("INSERT INTO invoices VALUES (42)"));
        db.close();
    }
    QSqlDatabase::removeDatabase(QStringLiteral("x"));
    SqliteStore store({path()});
    std::string error;
    QVERIFY(!store.load(&error));
    QVERIFY2(error.find("is not a Leasehold database (it has tables invoices)") !=
                 std::string::npos,
             error.c_str());
    QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("y"));
    db.setDatabaseName(path());
    QVERIFY(db.open());
    QSqlQuery q(db);
    QVERIFY(q.exec(QStringLiteral("SELECT COUNT(*) FROM sqlite_master")) && q.next());
    QCOMPARE(q.value(0).toInt(), 1); // nothing was added to it
}

void TstSqliteStore::databasesOfEarlierReleasesAreBroughtUpToDate()
{
    for (const char *file : {"schema2.db", "schema3.db", "schema4.db"}) {
        const QString copy = path();
        QFile::remove(copy);
        QVERIFY(QFile::copy(QStringLiteral(LEASEHOLD_STORE_DATA "/") + QLatin1String(file), copy));
        QFile::setPermissions(copy, QFile::ReadOwner | QFile::WriteOwner);
        for (int start = 0; start < 2; ++start) { // brought up to date, then simply opened
            SqliteStore::Options options{copy};
            SqliteStore store(options);
            std::string error;
            const std::optional<StoredState> state = store.load(&error);
            QVERIFY2(state, (std::string(file) + ": " + error).c_str());
            QCOMPARE(state->leases.size(), std::size_t(1));
            QCOMPARE(state->leases.front().holder, std::string("did:agent:holder"));
            QCOMPARE(state->leases.front().resource, std::string("lock:deploy/production"));
            QCOMPARE(state->leases.front().token, std::uint64_t(41));
            QCOMPARE(state->agents.size(), std::size_t(3));
            QCOMPARE(state->tokenEnd, std::uint64_t(4097));
            const std::vector<LedgerEvent> events = store.ledger(0, 1000, {});
            QCOMPARE(events.size(), std::size_t(83));
            QCOMPARE(events.front().seq, std::uint64_t(1));
            QCOMPARE(events.back().seq, std::uint64_t(83)); // the stop's pause
            QCOMPARE(events[81].kind, EventKind::Refused);
            QCOMPARE(events[81].actorDid, std::string("did:agent:other"));
            QCOMPARE(events[81].facts.holder, std::string("did:agent:holder"));
            QCOMPARE(store.ledger(0, 1000, {"did:agent:a1", {}, {}}).size(), std::size_t(28));
            store.close();
        }
        QCOMPARE(rows(copy, QStringLiteral("SELECT value FROM meta WHERE key = 'schema'")),
                 (QList<QVariantList>{{QStringLiteral("5")}}));
        // Leases and agents are one B-tree each now.
        QCOMPARE(rows(copy, QStringLiteral("SELECT name FROM sqlite_master WHERE name IN "
                                           "('leases', 'agents') AND sql LIKE '%WITHOUT ROWID' "
                                           "ORDER BY name")),
                 (QList<QVariantList>{{QStringLiteral("agents")}, {QStringLiteral("leases")}}));
        QStringList tables;
        for (const QVariantList &row :
             rows(copy, QStringLiteral("SELECT name FROM sqlite_master WHERE type = 'table' "
                                       "ORDER BY name")))
            tables << row.front().toString();
        QCOMPARE(tables, (QStringList{"agents", "keys", "leases", "ledger_filters",
                                      "ledger_p00000000", "meta"}));
    }
}

void TstSqliteStore::damagedStateIsRefusedButNotADamagedLedgerPage()
{
    LeaseInfo held{"ls_1", "fs:src/a.cpp", "did:agent:a", Mode::Write, 7, 1000, 61000, 60000};
    auto fill = [&] {
        SqliteStore store({path()});
        std::string error;
        QVERIFY2(store.load(&error), error.c_str());
        QVERIFY(commit(store, {PutLease{held}, AppendEvent{event(1, "did:agent:a")},
                               AppendEvent{event(2, "did:agent:b")}}));
    };
    // A damaged ledger partition does not hold up the start: its events are lost, not the state.
    fill();
    QVERIFY(damage(QStringLiteral("ledger_p00000000")));
    {
        SqliteStore store({path()});
        std::string error;
        const std::optional<StoredState> state = store.load(&error);
        QVERIFY2(state, error.c_str());
        QCOMPARE(state->leases.size(), 1u);
    }
    // Damaged state does: the start is refused, naming the table, and the file is left as it is.
    QVERIFY(QFile::remove(path()));
    fill();
    QVERIFY(damage(QStringLiteral("leases")));
    QFile before(path());
    QVERIFY(before.open(QIODevice::ReadOnly));
    const QByteArray bytes = before.readAll();
    before.close();
    SqliteStore store({path()});
    std::string error;
    QVERIFY(!store.load(&error));
    QVERIFY2(error.find("is damaged (quick_check of leases") != std::string::npos, error.c_str());
    QVERIFY2(error.find("left untouched") != std::string::npos, error.c_str());
    QFile after(path());
    QVERIFY(after.open(QIODevice::ReadOnly));
    QCOMPARE(after.readAll(), bytes);
}

void TstSqliteStore::impossibleRowsAreDroppedAndAnImpossibleTokenMarkRefused()
{
    LeaseInfo good{"ls_1", "lock:a", "did:agent:a", Mode::Write, 7, 1000, 61000, 60000};
    LeaseInfo bad{"ls_2", "lock:b", "did:agent:b", Mode::Write, 8, 1000, 61000, 60000};
    {
        SqliteStore store({path()});
        std::string error;
        QVERIFY2(store.load(&error), error.c_str());
        QVERIFY(commit(store, {PutLease{good}, PutLease{bad}}));
    }
    auto edit = [this](const char *sql) {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), "edit");
        db.setDatabaseName(path());
        QSqlQuery q(db);
        const bool done = db.open() && q.exec(QLatin1String(sql));
        q = QSqlQuery();
        db.close();
        db = QSqlDatabase();
        QSqlDatabase::removeDatabase("edit");
        return done;
    };
    // A token at the top of the range (a flipped sign bit) would wrap the next one to 0: the
    // row is dropped, and tokens go on from the rows that can be true.
    QVERIFY(edit("UPDATE leases SET token = -1 WHERE lease_id = 'ls_2'"));
    {
        SqliteStore store({path()});
        std::string error;
        const std::optional<StoredState> state = store.load(&error);
        QVERIFY2(state, error.c_str());
        QCOMPARE(state->leases.size(), 1u);
        QCOMPARE(state->leases[0].leaseId, std::string("ls_1"));
        QVERIFY(state->tokenEnd >= 8 && state->tokenEnd < (std::uint64_t(1) << 62));
    }
    // A high-water mark no run could have written cannot be trusted to keep tokens growing.
    QVERIFY(edit("INSERT OR REPLACE INTO meta (key, value) VALUES ('token_end', "
                 "'9223372036854775807')"));
    SqliteStore store({path()});
    std::string error;
    QVERIFY(!store.load(&error));
    QVERIFY2(error.find("token high-water mark 9223372036854775807 is impossible") !=
                 std::string::npos,
             error.c_str());
}

QTEST_MAIN(TstSqliteStore)
void TstSqliteStore::aSchemaOneLedgerIsCarriedForward()
{
    // A database as schema 1 wrote it: facts as "key=value" text in `detail`.
    {
        QSqlDatabase db =
            QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("v1"));
        db.setDatabaseName(path());
        QVERIFY(db.open());
        for (const char *statement :
             {"CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
              "INSERT INTO meta VALUES ('application', 'leasehold'), ('schema', '1'), "
              "('token_end', '1')",
              "CREATE TABLE ledger (seq INTEGER PRIMARY KEY, at INTEGER NOT NULL, kind TEXT NOT "
              "NULL, actor TEXT NOT NULL, resource TEXT NOT NULL, lease_id TEXT NOT NULL, token "
              "INTEGER NOT NULL, ttl_ms INTEGER NOT NULL, reason TEXT NOT NULL, detail TEXT NOT "
              "NULL)",
              "INSERT INTO ledger VALUES (1, 1000, 'coordination.lease.refused', 'did:agent:a', "
              "'lock:x', '', 0, 0, 'lease_held', 'holder=did:agent:b')"})
            QVERIFY2(QSqlQuery(db).exec(QLatin1String(statement)), statement);
        db.close();
    }
    QSqlDatabase::removeDatabase(QStringLiteral("v1"));

    SqliteStore store({path()});
    std::string error;
    QVERIFY2(store.load(&error), error.c_str());
    // The old event is kept, its text never parsed: it reads with no facts.
    std::vector<LedgerEvent> page = store.ledger(0, 10, {});
    QCOMPARE(page.size(), 1u);
    QCOMPARE(page[0].reason, std::string("lease_held"));
    QVERIFY(page[0].facts == EventFacts{});
    // New events are written and read with their facts beside it.
    StoreOps ops;
    LedgerEvent e = event(2, "did:agent:a");
    e.facts.cycle = {{"did:agent:a", "lock:x"}, {"did:agent:b", "lock:y"}};
    ops.add(AppendEvent{e});
    QVERIFY(commit(store, std::move(ops)));
    page = store.ledger(1, 10, {});
    QCOMPARE(page.size(), 1u);
    QVERIFY(page[0].facts == e.facts);
    store.close();
    QCOMPARE(rows(path(), QStringLiteral("SELECT value FROM meta WHERE key = 'schema'")),
             (QList<QVariantList>{{QStringLiteral("5")}}));
}

namespace {

// Whether `file`'s bytes hold `marker` (freed pages keep their old bytes unless rewritten).
bool fileHolds(const QString &file, const std::string &marker)
{
    QFile f(file);
    return f.open(QIODevice::ReadOnly) && f.readAll().contains(QByteArray::fromStdString(marker));
}

std::vector<std::uint64_t> seqs(const std::vector<LedgerEvent> &events)
{
    std::vector<std::uint64_t> out;
    for (const LedgerEvent &e : events)
        out.push_back(e.seq);
    return out;
}

std::vector<std::uint64_t> range(std::uint64_t first, std::uint64_t last, std::uint64_t step = 1)
{
    std::vector<std::uint64_t> out;
    for (std::uint64_t s = first; s <= last; s += step)
        out.push_back(s);
    return out;
}

} // namespace

void TstSqliteStore::retentionDropsWholePartitionsAndReadsHonourTheBounds()
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
            ops.add(AppendEvent{event(s, "did:agent:a", TimeMs(s) * 10)});
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

void TstSqliteStore::aDroppedPartitionIsNotRewritten()
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
            next.add(AppendEvent{event(seq, "did:agent:a")});
        QVERIFY(commit(store, std::move(next)));
        QVERIFY(settle(store, [&] {
            return !partitionTables(path()).contains(QStringLiteral("ledger_p00000000"));
        }));
        QCOMPARE(store.ledger(0, 1, {}).front().seq, 401u);
        store.close();
    }
    QVERIFY2(fileHolds(path(), marker), "the dropped partition's pages were overwritten");
}

void TstSqliteStore::anArchivedPartitionRetentionDropsIsNotRewritten()
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
            ops.add(AppendEvent{event(seq, "did:agent:a")});
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

void TstSqliteStore::queriesPageAcrossPartitionsWithEveryFilter()
{
    SqliteStore::Options options{path()};
    options.partitionRows = 8;
    SqliteStore store(options);
    std::string error;
    QVERIFY(store.load(&error));
    StoreOps ops;
    for (std::uint64_t seq = 1; seq <= 50; ++seq) {
        LedgerEvent e =
            event(seq, seq % 2 ? "did:agent:odd" : "did:agent:even", 1000 + TimeMs(seq) * 10);
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

void TstSqliteStore::aLedgerRowOutsideItsPartitionIsPassedOver()
{
    SqliteStore::Options options{path()};
    options.partitionRows = 8;
    {
        SqliteStore store(options);
        std::string error;
        QVERIFY(store.load(&error));
        StoreOps ops;
        for (std::uint64_t seq = 1; seq <= 20; ++seq)
            ops.add(AppendEvent{event(seq, "did:agent:a", 1000 + TimeMs(seq))});
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

void TstSqliteStore::sealedPartitionsMoveToTheArchiveWithTheirIndexes()
{
    SqliteStore::Options options{path()};
    options.partitionRows = 10;
    SqliteStore store(options);
    std::string error;
    QVERIFY(store.load(&error));
    StoreOps ops;
    for (std::uint64_t seq = 1; seq <= 25; ++seq) // a in partition 0 only, b in 1 and 2 (open)
        ops.add(AppendEvent{event(seq, seq <= 10 ? "did:agent:a" : "did:agent:b")});
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

void TstSqliteStore::eachReadUsesTheMostSelectiveIndex()
{
    SqliteStore::Options options{path()};
    options.partitionRows = 4096;
    SqliteStore store(options);
    std::string error;
    QVERIFY(store.load(&error));
    StoreOps ops;
    for (std::uint64_t seq = 1; seq <= 9000; ++seq) { // two sealed partitions and an open one
        LedgerEvent e = event(seq, "did:agent:" + std::to_string(seq % 50));
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

void TstSqliteStore::anAgentFilterHoldsItsAgentsAndFewOthers()
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

void TstSqliteStore::aSchemaTwoLedgerIsMovedIntoPartitions()
{
    // A database as schema 2 wrote it: one ledger table with an actor index, facts encoded.
    std::vector<LedgerEvent> written;
    {
        QSqlDatabase db =
            QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("v2"));
        db.setDatabaseName(path());
        QVERIFY(db.open());
        for (const char *statement :
             {"CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
              "INSERT INTO meta VALUES ('application', 'leasehold'), ('schema', '2'), "
              "('token_end', '1')",
              "CREATE TABLE ledger (seq INTEGER PRIMARY KEY, at INTEGER NOT NULL, kind TEXT NOT "
              "NULL, actor TEXT NOT NULL, resource TEXT NOT NULL, lease_id TEXT NOT NULL, token "
              "INTEGER NOT NULL, ttl_ms INTEGER NOT NULL, reason TEXT NOT NULL, facts BLOB NOT "
              "NULL)",
              "CREATE INDEX ledger_actor ON ledger (actor, seq)"})
            QVERIFY2(QSqlQuery(db).exec(QLatin1String(statement)), statement);
        QSqlQuery insert(db);
        insert.prepare(QStringLiteral("INSERT INTO ledger VALUES (?, ?, ?, ?, ?, '', 0, 0, ?, ?)"));
        for (std::uint64_t seq = 3; seq <= 27; ++seq) {
            LedgerEvent e = event(seq, "did:agent:a");
            e.facts.holder = "did:agent:h" + std::to_string(seq);
            for (const QVariant &v : {QVariant(qlonglong(e.seq)), QVariant(qlonglong(e.at)),
                                      QVariant(QString::fromLatin1(eventKindName(e.kind).data())),
                                      QVariant(QString::fromStdString(e.actorDid)),
                                      QVariant(QString::fromStdString(e.resource)),
                                      QVariant(QString::fromStdString(e.reason)),
                                      QVariant(QByteArray::fromStdString(encodeFacts(e.facts)))})
                insert.addBindValue(v);
            QVERIFY(insert.exec());
            written.push_back(e);
        }
        db.close();
    }
    QSqlDatabase::removeDatabase(QStringLiteral("v2"));

    SqliteStore::Options options{path()};
    options.partitionRows = 10;
    SqliteStore store(options);
    std::string error;
    QVERIFY2(store.load(&error), error.c_str());
    const std::vector<LedgerEvent> moved = store.ledger(0, 100, {});
    QCOMPARE(moved.size(), written.size());
    for (std::size_t i = 0; i < moved.size(); ++i) {
        QCOMPARE(moved[i].seq, written[i].seq);
        QVERIFY(moved[i].facts == written[i].facts);
    }
    store.close();
    QCOMPARE(partitionTables(path()),
             (QStringList{"ledger_p00000000", "ledger_p00000001", "ledger_p00000002"}));
}

#include "tst_sqlitestore.moc"
