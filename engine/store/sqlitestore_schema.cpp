// SqliteStore: the database's layout — its schema, the migrations from every earlier one, and
// the ledger archive attached beside it — checked (or created) on every open.

#include "sqlitestore.h"
#include "sqlitestore_p.h"

#include <QElapsedTimer>
#include <QFileInfo>
#include <QLoggingCategory>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QVariant>

namespace leasehold {

Q_LOGGING_CATEGORY(lcStoreLoad, "leasehold.store")

using sqlitestore::sqlError;

namespace {

// 1: the ledger's facts were "key=value" text in `detail`. 2: typed facts, encoded (ledgerfacts.h),
// in `facts`; rows written by schema 1 keep their text there and show no facts. 3: the ledger
// in partitions (ledgerparts.h) instead of one table with an actor index. 4: each sealed
// partition's agents as one filter row (ledger_filters) instead of a row per agent. 5: leases
// and agents WITHOUT ROWID: a row is one entry in one B-tree, where a rowid table kept it twice
// (the table and its key's index), so a grant, a release or an agent's new trust writes half the
// pages.
constexpr int kSchemaVersion = 5;

#define LEASEHOLD_LEASES_COLUMNS                                                                   \
    "(lease_id TEXT PRIMARY KEY, resource TEXT NOT NULL, holder TEXT NOT NULL, mode TEXT NOT "     \
    "NULL, token INTEGER NOT NULL, granted_at INTEGER NOT NULL, expires_at INTEGER NOT NULL, "     \
    "ttl_ms INTEGER NOT NULL) WITHOUT ROWID"
#define LEASEHOLD_AGENTS_COLUMNS                                                                   \
    "(did TEXT PRIMARY KEY, trust REAL NOT NULL, releases INTEGER NOT NULL, expiries INTEGER NOT " \
    "NULL, suspended INTEGER NOT NULL) WITHOUT ROWID"

const char *const kSchema[] = {
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS leases " LEASEHOLD_LEASES_COLUMNS,
    "CREATE TABLE IF NOT EXISTS agents " LEASEHOLD_AGENTS_COLUMNS,
    // Which agents each sealed ledger partition may hold (ledgerparts.h, actorfilter.h).
    "CREATE TABLE IF NOT EXISTS ledger_filters (part INTEGER PRIMARY KEY, probes INTEGER NOT "
    "NULL, bits BLOB NOT NULL)",
    "CREATE TABLE IF NOT EXISTS keys (digest TEXT PRIMARY KEY, did TEXT NOT NULL, role TEXT NOT "
    "NULL, created_at INTEGER NOT NULL)",
};

bool migrate(QSqlDatabase &db, int from, std::uint64_t partitionRows, std::string *error)
{
    if (from >= kSchemaVersion)
        return true;
    // Dropping schema 3's summary reads every page of it: about a minute from a cold cache for
    // a ledger of 20 million events, so the operator hears why the start waits.
    qCInfo(lcStoreLoad) << "bringing" << db.databaseName() << "from schema" << from << "to"
                        << kSchemaVersion << "(a long ledger takes a while)";
    QElapsedTimer took;
    took.start();
    QSqlQuery q(db);
    if (!q.exec(QStringLiteral("BEGIN IMMEDIATE"))) {
        *error = "cannot start the schema migration: " + sqlError(q);
        return false;
    }
    bool ok = true;
    if (from == 1 && !q.exec(QStringLiteral("ALTER TABLE ledger RENAME COLUMN detail TO facts"))) {
        *error = "cannot bring the ledger to schema 2: " + sqlError(q);
        ok = false;
    }
    if (ok && from <= 2) {
        QSqlQuery(db).exec(QStringLiteral("DROP INDEX IF EXISTS ledger_actor"));
        ok = ledgerparts::migrate(db, partitionRows, error);
    }
    // Schema 3's summary, a row per agent and partition: the filters are built anew from the
    // partitions' own agent indexes, one partition a step, by the writer's upkeep.
    if (ok && from == 3 && !q.exec(QStringLiteral("DROP TABLE IF EXISTS ledger_actors"))) {
        *error = "cannot drop schema 3's agent summary: " + sqlError(q);
        ok = false;
    }
    // Schema 4's rowid tables, copied into their WITHOUT ROWID form (one the database lacks is
    // created with the rest of the schema). A row without a key, which a rowid table allows,
    // was never a real lease or agent and is not carried over.
    struct Rebuild
    {
        const char *table, *definition, *columns, *key;
    };
    const Rebuild withoutRowid[] = {
        {"leases", LEASEHOLD_LEASES_COLUMNS,
         "lease_id, resource, holder, mode, token, granted_at, expires_at, ttl_ms", "lease_id"},
        {"agents", LEASEHOLD_AGENTS_COLUMNS, "did, trust, releases, expiries, suspended", "did"},
    };
    for (const Rebuild &r : withoutRowid) {
        if (!ok || from > 4)
            break;
        QSqlQuery exists(db);
        exists.prepare(
            QStringLiteral("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?"));
        exists.addBindValue(QLatin1String(r.table));
        if (!exists.exec() || !exists.next())
            continue;
        exists.finish();
        const QString t = QLatin1String(r.table);
        for (const QString &step :
             {QStringLiteral("CREATE TABLE %1_v5 %2").arg(t, QLatin1String(r.definition)),
              QStringLiteral("INSERT INTO %1_v5 SELECT %2 FROM %1 WHERE %3 IS NOT NULL")
                  .arg(t, QLatin1String(r.columns), QLatin1String(r.key)),
              QStringLiteral("DROP TABLE %1").arg(t),
              QStringLiteral("ALTER TABLE %1_v5 RENAME TO %1").arg(t)}) {
            if (ok && !q.exec(step)) {
                *error = "cannot rebuild " + t.toStdString() + " without rowid: " + sqlError(q);
                ok = false;
            }
        }
    }
    if (ok && !q.exec(QStringLiteral("UPDATE meta SET value = '%1' WHERE key = 'schema'")
                          .arg(kSchemaVersion))) {
        *error = "cannot record the schema: " + sqlError(q);
        ok = false;
    }
    QSqlQuery(db).exec(ok ? QStringLiteral("COMMIT") : QStringLiteral("ROLLBACK"));
    if (ok)
        qCInfo(lcStoreLoad) << "schema" << kSchemaVersion << "in" << took.elapsed() << "ms";
    return ok;
}

#undef LEASEHOLD_LEASES_COLUMNS
#undef LEASEHOLD_AGENTS_COLUMNS

} // namespace

namespace sqlitestore {

std::string sqlError(const QSqlQuery &q)
{
    return q.lastError().text().toStdString();
}

} // namespace sqlitestore

bool SqliteStore::createOrCheckSchema(QSqlDatabase &db, std::string *error)
{
    const QString path = m_options.path;
    QSqlQuery q(db);
    // A file that is not SQLite fails here, on its first read.
    if (!q.exec(QStringLiteral("SELECT name FROM sqlite_master WHERE type = 'table'"))) {
        *error = path.toStdString() + " is not a usable SQLite database (" + sqlError(q) +
                 "); it was left untouched";
        return false;
    }
    QStringList tables;
    while (q.next())
        tables << q.value(0).toString();
    int migrateFrom = kSchemaVersion; // a new database needs no migration
    if (!tables.isEmpty()) {
        QSqlQuery m(db);
        const bool ours =
            tables.contains(QStringLiteral("meta")) &&
            m.exec(QStringLiteral("SELECT value FROM meta WHERE key = 'application'")) &&
            m.next() && m.value(0).toString() == QStringLiteral("leasehold");
        if (!ours) {
            *error = path.toStdString() + " is not a Leasehold database (it has tables " +
                     tables.join(QStringLiteral(", ")).toStdString() +
                     "); it was left untouched - use another --data-dir";
            return false;
        }
        QSqlQuery v(db);
        if (v.exec(QStringLiteral("SELECT value FROM meta WHERE key = 'schema'")) && v.next() &&
            v.value(0).toInt() > kSchemaVersion) {
            *error = path.toStdString() + " was written by a newer Leasehold (schema " +
                     v.value(0).toString().toStdString() + ")";
            return false;
        }
        migrateFrom = v.value(0).toInt();
        // No statement may be active while tables are dropped (SQLite says "table is locked").
        q.finish();
        m.finish();
        v.finish();
    }
    for (const char *statement :
         {"PRAGMA journal_mode = WAL", "PRAGMA synchronous = FULL", "PRAGMA secure_delete = FAST"})
        q.exec(QLatin1String(statement));
    // What the service needs to go on — leases, agents, keys, the token mark (and, before a
    // migration, the old ledger it will read) — is checked whole before anything is written.
    // The ledger's partitions and their agent summary are not: months of them would hold up
    // every start (20 million events: 8 s from a cold cache for the summary alone), and a
    // damaged page there costs the events on it, not the state.
    QStringList checked;
    QSqlQuery present(db);
    present.exec(QStringLiteral("SELECT name FROM sqlite_master WHERE type = 'table' AND name IN "
                                "('meta', 'leases', 'agents', 'keys', 'ledger')"));
    while (present.next())
        checked << present.value(0).toString();
    present.finish();
    for (const QString &table : checked) {
        QSqlQuery check(db);
        if (!check.exec(QStringLiteral("PRAGMA quick_check(%1)").arg(table)) || !check.next() ||
            check.value(0).toString() != QStringLiteral("ok")) {
            *error = path.toStdString() + " is damaged (quick_check of " + table.toStdString() +
                     ": " +
                     (check.isActive() ? check.value(0).toString() : check.lastError().text())
                         .toStdString() +
                     "); it was left untouched";
            return false;
        }
    }
    if (!migrate(db, migrateFrom, m_options.partitionRows, error))
        return false;
    for (const char *statement : kSchema) {
        if (!q.exec(QLatin1String(statement))) {
            *error = "cannot create the schema in " + path.toStdString() + ": " + sqlError(q);
            return false;
        }
    }
    q.exec(QStringLiteral("INSERT OR IGNORE INTO meta VALUES ('application', 'leasehold')"));
    q.exec(
        QStringLiteral("INSERT OR IGNORE INTO meta VALUES ('schema', '%1')").arg(kSchemaVersion));
    q.exec(QStringLiteral("INSERT OR IGNORE INTO meta VALUES ('token_end', '1')"));
    return true;
}

} // namespace leasehold
