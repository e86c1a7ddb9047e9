// The SQLite store against a temporary directory: round trips across a reopen, the last word of a
// batch, bounded ledger queueing, and files that are not (or not our) databases or are damaged.

#include "actorfilter.h"
#include "ledgerfacts.h"
#include "storefixture.h"

#include <QSqlError>

#include <map>

using namespace leasehold;
using namespace leasehold::storetest;

class TstSqliteStore : public QObject, StoreFixture
{
    Q_OBJECT

private slots:
    void init() { freshDirectory(); }
    void stateSurvivesAReopen();
    void onlyTheLastWordInABatchIsWritten();
    void ledgerEventsBeyondTheBoundAreDroppedAndCounted();
    void aFileThatIsNotADatabaseIsRefused();
    void aForeignDatabaseIsRefusedAndLeftAlone();
    void damagedStateIsRefusedButNotADamagedLedgerPage();
    void impossibleRowsAreDroppedAndAnImpossibleTokenMarkRefused();
};

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
        QVERIFY(commit(store, {DropLease{"ls_2"}, PutAgent{{"did:agent:b", 0.5, 1, 0, false}},
                               PutAgent{{"did:agent:c", -5, 0, 1, true}},
                               AppendEvent{storedEvent(41, "b")},
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

void TstSqliteStore::ledgerEventsBeyondTheBoundAreDroppedAndCounted()
{
    SqliteStore::Options options{path()};
    options.maxQueuedEvents = 10;
    SqliteStore store(options);
    std::string error;
    QVERIFY(store.load(&error));
    StoreOps burst;
    for (std::uint64_t seq = 1; seq <= 1000; ++seq)
        burst.add(AppendEvent{storedEvent(seq, "a")});
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

void TstSqliteStore::damagedStateIsRefusedButNotADamagedLedgerPage()
{
    LeaseInfo held{"ls_1", "fs:src/a.cpp", "did:agent:a", Mode::Write, 7, 1000, 61000, 60000};
    auto fill = [&] {
        SqliteStore store({path()});
        std::string error;
        QVERIFY2(store.load(&error), error.c_str());
        QVERIFY(commit(store, {PutLease{held}, AppendEvent{storedEvent(1, "did:agent:a")},
                               AppendEvent{storedEvent(2, "did:agent:b")}}));
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
#include "tst_sqlitestore.moc"
