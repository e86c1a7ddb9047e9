// SqliteStore: opening and checking the database, loading the last run's state, the queue the
// engine thread submits to, and ledger reads. The writer thread is in sqlitestore_writer.cpp.

#include "sqlitestore.h"
#include "threadname.h"

#include <QAbstractEventDispatcher>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QLoggingCategory>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QVariant>

#include <functional>

namespace leasehold {

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

Q_LOGGING_CATEGORY(lcStoreLoad, "leasehold.store")

// Attaches the ledger archive as ledgerparts::kArchive, for reads across both files.
bool attachArchive(QSqlDatabase &db, const QString &archivePath)
{
    QSqlQuery q(db);
    q.prepare(QStringLiteral("ATTACH DATABASE ? AS %1").arg(QLatin1String(ledgerparts::kArchive)));
    q.addBindValue(archivePath);
    return q.exec();
}

// Tokens start at 1 and grow by one per grant; one beyond this is damage, never a real token
// (and keeps `token + 1` from wrapping).
constexpr std::uint64_t kMaxToken = std::uint64_t(1) << 62;

// Whether a stored lease row can be what a grant wrote: a damaged one is dropped, never trusted.
bool plausible(const LeaseInfo &l)
{
    return !l.leaseId.empty() && !l.resource.empty() && !l.holder.empty() && l.token > 0 &&
           l.token < kMaxToken && l.expiresAt >= l.grantedAt && l.ttlMs >= 0;
}

std::string sqlError(const QSqlQuery &q)
{
    return q.lastError().text().toStdString();
}

// Brings a database written by an older schema up to this one, in place, in one transaction.
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

SqliteStore::SqliteStore(Options options, QObject *parent)
    : QObject(parent)
    , m_options(std::move(options))
    , m_readerName(QStringLiteral("leasehold-reader-%1").arg(quintptr(this)))
{}

SqliteStore::~SqliteStore()
{
    close();
    if (QSqlDatabase::contains(m_readerName)) {
        QSqlDatabase::database(m_readerName, false).close();
        QSqlDatabase::removeDatabase(m_readerName);
    }
}

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

std::optional<StoredState> SqliteStore::load(std::string *error)
{
    QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), m_readerName);
    db.setDatabaseName(m_options.path);
    if (!db.open()) {
        *error = "cannot open " + m_options.path.toStdString() + ": " +
                 db.lastError().text().toStdString();
        return std::nullopt;
    }
    if (!createOrCheckSchema(db, error))
        return std::nullopt;
    if (m_options.archivePath.isEmpty())
        m_options.archivePath = LedgerArchiver::pathFor(m_options.path);
    if (!LedgerArchiver::prepare(m_options.archivePath, error))
        return std::nullopt;

    StoredState state;
    QSqlQuery q(db);
    // A query that stops part-way (a damaged page) is a refusal to start, not a short read: no
    // acknowledged lease is silently left behind.
    auto readAll = [&](const QString &sql, const std::function<void()> &row) {
        if (!q.exec(sql)) {
            *error = "cannot read " + m_options.path.toStdString() + ": " + sqlError(q);
            return false;
        }
        while (q.next())
            row();
        if (q.lastError().isValid()) {
            *error = "cannot read " + m_options.path.toStdString() + ": " + sqlError(q);
            return false;
        }
        return true;
    };
    std::size_t damaged = 0;
    const bool read =
        readAll(QStringLiteral("SELECT lease_id, resource, holder, mode, token, granted_at, "
                               "expires_at, ttl_ms FROM leases ORDER BY token"),
                [&] {
                    LeaseInfo l;
                    l.leaseId = q.value(0).toString().toStdString();
                    l.resource = q.value(1).toString().toStdString();
                    l.holder = q.value(2).toString().toStdString();
                    const std::optional<Mode> mode = parseMode(q.value(3).toString().toStdString());
                    l.token = q.value(4).toULongLong();
                    l.grantedAt = q.value(5).toLongLong();
                    l.expiresAt = q.value(6).toLongLong();
                    l.ttlMs = q.value(7).toLongLong();
                    if (!mode || !plausible(l)) {
                        ++damaged;
                        return;
                    }
                    l.mode = *mode;
                    state.tokenEnd = std::max(state.tokenEnd, l.token + 1);
                    state.leases.push_back(std::move(l));
                }) &&
        readAll(QStringLiteral("SELECT did, trust, releases, expiries, suspended FROM agents"),
                [&] {
                    state.agents.push_back({q.value(0).toString().toStdString(),
                                            q.value(1).toDouble(), q.value(2).toULongLong(),
                                            q.value(3).toULongLong(), q.value(4).toBool()});
                }) &&
        readAll(
            QStringLiteral("SELECT digest, did, role, created_at FROM keys ORDER BY created_at"),
            [&] {
                state.keys.push_back(
                    {q.value(0).toString().toStdString(), q.value(1).toString().toStdString(),
                     q.value(2).toString().toStdString(), q.value(3).toLongLong()});
            }) &&
        readAll(QStringLiteral("SELECT value FROM meta WHERE key = 'token_end'"), [&] {
            state.tokenEnd = std::max<std::uint64_t>(state.tokenEnd, q.value(0).toULongLong());
        });
    if (!read)
        return std::nullopt;
    if (state.tokenEnd >= kMaxToken) {
        // Tokens must keep growing; from a damaged high-water mark they cannot.
        *error = m_options.path.toStdString() + " is damaged: its token high-water mark " +
                 std::to_string(state.tokenEnd) + " is impossible";
        return std::nullopt;
    }
    if (damaged > 0)
        qCWarning(lcStoreLoad) << damaged << "damaged lease rows in" << m_options.path
                               << "were dropped";
    if (!attachArchive(db, m_options.archivePath)) {
        *error = "cannot open the ledger archive " + m_options.archivePath.toStdString() + ": " +
                 db.lastError().text().toStdString();
        return std::nullopt;
    }
    state.lastSeq = std::max(ledgerparts::newest(db).first,
                             ledgerparts::newest(db, ledgerparts::kArchive).first);

    m_open = true;
    m_archiver = std::make_unique<LedgerArchiver>(
        LedgerArchiver::Options{m_options.path, m_options.archivePath, bounds()},
        [archived = m_archived](std::uint64_t part) {
            std::lock_guard lock(archived->mutex);
            if (std::find(archived->parts.begin(), archived->parts.end(), part) ==
                archived->parts.end())
                archived->parts.push_back(part);
        });
    m_archiver->start();
    m_writer = std::thread([this] { writerLoop(); });
    {
        std::lock_guard lock(m_pagerMutex);
        m_pager = std::thread([this] { pagerLoop(); }); // reads pages, checkpoints the WAL
    }
    return state;
}

std::uint64_t SqliteStore::submit(StoreOps &ops)
{
    const std::uint64_t ticket = ++m_submitted;
    // The engine thread is at work: its loop looks at what became durable before it can sleep.
    m_engineMaySleep.store(false, std::memory_order_relaxed);
    Chunk chunk{ticket, std::move(ops)}; // leaves `ops` empty
    bool wake = false;
    {
        std::lock_guard lock(m_mutex);
        const std::size_t room =
            m_options.maxQueuedEvents - std::min(m_options.maxQueuedEvents, m_queuedEvents);
        if (chunk.ops.events() > room) {
            // Ledger events beyond the bound are dropped (and counted); state never is.
            m_dropped.fetch_add(chunk.ops.events() - room, std::memory_order_relaxed);
            chunk.ops.keepEvents(room);
        }
        m_queuedEvents += chunk.ops.events();
        m_queuedOps += chunk.ops.size();
        m_queue.push_back(std::move(chunk)); // an empty chunk still brings its ticket back
        m_engineIdle = false;                // and may bring more before it next goes idle
        if (!m_spare.empty()) {
            ops = std::move(m_spare.back());
            m_spare.pop_back();
        }
        wake = m_writerWaiting || (m_writerGathering && m_queuedOps >= m_options.maxBatch);
        m_writerWaiting = false;
    }
    // A busy writer takes this with its next batch; waking it costs a system call per decision.
    if (wake)
        m_wake.notify_one();
    return ticket;
}

void SqliteStore::setDurableCallback(std::function<void(std::uint64_t)> callback)
{
    m_onDurable = std::move(callback);
    followTurns();
}

void SqliteStore::followTurns()
{
    // Qt's own dispatcher (headless) signals each turn: awake() as it starts, aboutToBlock()
    // before a wait. GLib's signals them per processEvents() call, which may sleep many times
    // over, so under it every commit wakes the loop.
    QAbstractEventDispatcher *loop = QAbstractEventDispatcher::instance(thread());
    if (m_followingTurns || !loop || !loop->inherits("QEventDispatcherUNIX"))
        return;
    connect(loop, &QAbstractEventDispatcher::awake, this, [this] {
        m_engineMaySleep.store(false, std::memory_order_relaxed);
        deliverDurable();
    });
    connect(loop, &QAbstractEventDispatcher::aboutToBlock, this, [this] {
        // Set before the look: a commit that ends after the look sees it and wakes the loop. An
        // answer given here may submit more (a parked wait granted with a lease given back by a
        // client that left), which clears the mark, as does a commit that posted a wake-up
        // meanwhile: then it is set and looked again, so the loop never sleeps on a submission
        // whose commit would not wake it.
        do {
            m_engineMaySleep.store(true);
            deliverDurable();
        } while (!m_engineMaySleep.load());
        // Nothing more comes until answers go out: a writer gathering for its commit window
        // would wait for changes still on their way to clients, so it commits now.
        bool gathering = false;
        {
            std::lock_guard lock(m_mutex);
            m_engineIdle = true;
            gathering = m_writerGathering;
        }
        if (gathering)
            m_wake.notify_one();
    });
    m_followingTurns.store(true);
}

void SqliteStore::deliverDurable()
{
    const std::uint64_t ticket = m_durable.load();
    if (ticket <= m_delivered)
        return;
    m_delivered = ticket;
    if (m_onDurable)
        m_onDurable(ticket);
}

void SqliteStore::setHealthCallback(std::function<void(const StoreHealth &)> callback)
{
    m_onHealth = std::move(callback);
}

StoreHealth SqliteStore::health() const
{
    std::lock_guard lock(m_mutex);
    return m_health;
}

std::vector<LedgerEvent> SqliteStore::ledger(std::uint64_t since, std::size_t limit,
                                             const LedgerFilter &filter)
{
    if (!m_open)
        return {};
    ledgerparts::FilterCache filters;
    return ledgerparts::query(QSqlDatabase::database(m_readerName), since, limit, filter, bounds(),
                              filters);
}

void SqliteStore::readLedger(std::uint64_t since, std::size_t limit, const LedgerFilter &filter,
                             std::function<void(std::vector<LedgerEvent>)> done)
{
    {
        std::lock_guard lock(m_pagerMutex);
        if (!m_pagerStopping && m_open) {
            m_pagerJobs.push_back(
                [this, since, limit, filter, done, b = bounds()](QSqlDatabase &db) {
                    done(ledgerparts::query(db, since, limit, filter, b, m_pagerFilters));
                });
            if (!m_pager.joinable())
                m_pager = std::thread([this] { pagerLoop(); });
            m_pagerWake.notify_one();
            return;
        }
    }
    done({});
}

void SqliteStore::pagerLoop()
{
    nameThisThread("lh-store-reader");
    const QString name = QStringLiteral("leasehold-pager-%1").arg(quintptr(this));
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), name);
        db.setDatabaseName(m_options.path);
        // A failed open answers every page empty; the writer reports the disk.
        if (db.open())
            attachArchive(db, m_options.archivePath);
        // Ready before the first query: the schema parsed, every agent filter in memory.
        m_pagerFilters.refresh(db, 0);
        std::uint64_t checkpointed = 0;
        std::uint64_t refreshed = m_batches.load();
        for (;;) {
            std::function<void(QSqlDatabase &)> job;
            {
                std::unique_lock lock(m_pagerMutex);
                m_pagerWake.wait_for(lock, std::chrono::milliseconds(m_options.checkpointEveryMs),
                                     [this] { return m_pagerStopping || !m_pagerJobs.empty(); });
                if (m_pagerStopping && m_pagerJobs.empty())
                    break;
                if (!m_pagerJobs.empty()) {
                    job = std::move(m_pagerJobs.front());
                    m_pagerJobs.pop_front();
                }
            }
            if (job) {
                job(db);
                continue;
            }
            // The WAL's checkpoint, here rather than inside a commit: PASSIVE copies what it
            // can without waiting for (or holding up) the writer.
            const std::uint64_t batches = m_batches.load();
            if (batches != checkpointed) {
                QElapsedTimer took;
                took.start();
                // The live file's: the archive's (attached) is its archiver's business.
                QSqlQuery(db).exec(QStringLiteral("PRAGMA main.wal_checkpoint(PASSIVE)"));
                checkpointed = batches;
                if (took.elapsed() >= 20)
                    qCDebug(lcStoreLoad) << "a checkpoint took" << took.elapsed() << "ms";
            } else if (batches != refreshed) {
                // Quiet for a tick after commits: what they changed is read now rather than by
                // the next query (the schema, reparsed once partitions are added; new filters).
                m_pagerFilters.refresh(db, 0);
                refreshed = batches;
            }
        }
        db.close();
    }
    QSqlDatabase::removeDatabase(name);
}

void SqliteStore::stopPager()
{
    {
        std::lock_guard lock(m_pagerMutex);
        m_pagerStopping = true;
    }
    m_pagerWake.notify_one();
    if (m_pager.joinable())
        m_pager.join();
}

StoreStats SqliteStore::stats() const
{
    StoreStats s;
    s.submitted = m_submitted;
    s.durable = m_durable.load();
    s.wakes = m_wakes.load();
    s.batches = m_batches.load();
    s.droppedEvents = m_dropped.load();
    s.failedBatches = m_failed.load();
    s.lostOps = m_lost.load();
    s.commitTimes = m_commitTimes.counts();
    if (m_archiver) {
        s.archive = true;
        s.archivedParts = m_archiver->moved();
        s.archiveFailures = m_archiver->failures();
        s.archiveBacklog = m_archiver->backlog();
    }
    std::lock_guard lock(m_mutex);
    s.queued = m_queuedOps;
    return s;
}

void SqliteStore::close()
{
    stopPager();
    if (m_archiver && !m_archiver->stop()) {
        // Stuck in a disk call that never returns (a hung mount): left behind, not waited for.
        qCritical("leasehold: the ledger archiver did not come back from the disk; leaving it");
        static_cast<void>(m_archiver.release());
    }
    if (!m_writer.joinable()) {
        m_open = false;
        return;
    }
    const auto bound = std::chrono::milliseconds(m_options.closeTimeoutMs);
    std::unique_lock lock(m_mutex);
    m_stopping = true;
    m_closeDeadline = std::chrono::steady_clock::now() + bound;
    m_wake.notify_one();
    // The writer gives up on a refusing disk at the deadline; one stuck inside a system call
    // that never returns (a hung network mount) is left behind rather than waited for.
    if (!m_exited.wait_for(lock, bound + std::chrono::seconds(2),
                           [this] { return m_writerExited; })) {
        lock.unlock();
        qCritical("leasehold: the store's writer did not come back from the disk; leaving it");
        m_stuck = true;
        m_writer.detach();
        m_open = false;
        return;
    }
    lock.unlock();
    m_writer.join();
    m_open = false;
}

} // namespace leasehold
