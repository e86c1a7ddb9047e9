// Databases written by earlier releases (data/README.md) and by earlier schemas are brought up to
// date with nothing lost.

#include "actorfilter.h"
#include "ledgerfacts.h"
#include "storefixture.h"

#include <QSqlError>

#include <map>

using namespace leasehold;
using namespace leasehold::storetest;

class TstStoreMigrations : public QObject, StoreFixture
{
    Q_OBJECT

private slots:
    void init() { freshDirectory(); }
    void aSchemaOneLedgerIsCarriedForward();
    void aSchemaTwoLedgerIsMovedIntoPartitions();
    void databasesOfEarlierReleasesAreBroughtUpToDate();
};

void TstStoreMigrations::aSchemaOneLedgerIsCarriedForward()
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
    LedgerEvent e = storedEvent(2, "did:agent:a");
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

void TstStoreMigrations::aSchemaTwoLedgerIsMovedIntoPartitions()
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
            LedgerEvent e = storedEvent(seq, "did:agent:a");
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

void TstStoreMigrations::databasesOfEarlierReleasesAreBroughtUpToDate()
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

QTEST_MAIN(TstStoreMigrations)
#include "tst_storemigrations.moc"
