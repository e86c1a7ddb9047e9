// SqliteStore: the writer thread. It owns its own connection and commits the queue in batches.

#include "sqlitestore.h"

#include "ledgerfacts.h"
#include "overloaded.h"
#include "threadname.h"

#include <QElapsedTimer>
#include <QLoggingCategory>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QVariant>

#include <array>
#include <chrono>
#include <string_view>
#include <unordered_map>

namespace leasehold {

namespace {

Q_LOGGING_CATEGORY(lcStore, "leasehold.store")

// Buffers kept for the engine thread to reuse, and the largest worth keeping.
constexpr std::size_t kSpareBuffers = 64;
constexpr std::size_t kSpareBytes = 1 << 20;

// What SQLite's error, as QtSql reports it, says about the disk.
StoreHealth healthOf(const QSqlError &error)
{
    bool numeric = false;
    const int code = error.nativeErrorCode().toInt(&numeric);
    return healthOfCode(numeric ? code : -1, error.text().toStdString());
}

} // namespace

void SqliteStore::reportHealth(const StoreHealth &health)
{
    {
        std::lock_guard lock(m_mutex);
        if (m_health == health)
            return;
        m_health = health;
    }
    if (health.ok())
        qCInfo(lcStore) << "the store is writing again";
    else
        qCCritical(lcStore) << "the store cannot write:" << health.phrase() << "-"
                            << health.detail.c_str() << "- retrying";
    QMetaObject::invokeMethod(
        this,
        [this, health] {
            if (m_onHealth)
                m_onHealth(health);
        },
        Qt::QueuedConnection);
}

bool SqliteStore::openWriter(QSqlDatabase &db)
{
    if (db.isOpen())
        return true;
    m_statements.reset();
    if (!db.open()) {
        m_lastError = healthOf(db.lastError());
        if (m_lastError.problem == StoreHealth::Problem::IoError)
            m_lastError.problem = StoreHealth::Problem::CannotOpen;
        return false;
    }
    QSqlQuery(db).exec(QStringLiteral("PRAGMA synchronous = FULL"));
    // A lock held by another process is waited for briefly, then reported, never forever.
    QSqlQuery(db).exec(QStringLiteral("PRAGMA busy_timeout = 250"));
    // Checkpoints run on the reader thread's connection (pagerLoop), not inside a commit.
    QSqlQuery(db).exec(QStringLiteral("PRAGMA wal_autocheckpoint = 0"));
    // A checkpoint held back (a long read, a long batch) grows the WAL; SQLite then reuses the
    // file at that size for good. The first commit after the WAL starts over cuts it back.
    QSqlQuery(db).exec(
        QStringLiteral("PRAGMA journal_size_limit = %1").arg(m_options.walLimitBytes));
    // Debian builds SQLite with secure_delete on: every page a dropped ledger partition freed
    // was zeroed and written through the WAL (a partition with its indexes is megabytes), and
    // commits queued behind those writes once retention began. FAST still clears what is
    // deleted inside pages that are written anyway, and writes nothing more.
    QSqlQuery(db).exec(QStringLiteral("PRAGMA secure_delete = FAST"));
    return true;
}

void SqliteStore::writerLoop()
{
    nameThisThread("lh-store-writer");
    const QString name = QStringLiteral("leasehold-writer-%1").arg(quintptr(this));
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), name);
        db.setDatabaseName(m_options.path);
        std::vector<Chunk> batch;
        std::vector<StoreOp> ops; // the batch, decoded
        int backoffMs = m_options.retryMinMs;
        auto lastCheckpoint = std::chrono::steady_clock::now();
        const std::chrono::microseconds window(m_options.commitWindowUs);
        bool streaming = false; // the last commit found more waiting
        auto lastStart = lastCheckpoint;
        for (;;) {
            if (batch.empty()) {
                std::unique_lock lock(m_mutex);
                m_writerWaiting = true;
                m_wake.wait(lock, [this] { return m_stopping || !m_queue.empty(); });
                m_writerWaiting = false;
                if (m_queue.empty() && m_stopping)
                    break;
                if (streaming && window.count() > 0) {
                    // Group commit: more decisions are on their way (the last commit found
                    // some waiting); one fsync for all that arrive within the window.
                    m_writerGathering = true;
                    m_wake.wait_until(lock, lastStart + window, [this] {
                        return m_stopping || m_engineIdle || m_queuedOps >= m_options.maxBatch;
                    });
                    m_writerGathering = false;
                }
                std::size_t taken = 0;
                while (!m_queue.empty() && (batch.empty() || taken < m_options.maxBatch)) {
                    m_queuedEvents -= m_queue.front().ops.events();
                    m_queuedOps -= m_queue.front().ops.size();
                    taken += m_queue.front().ops.size();
                    batch.push_back(std::move(m_queue.front()));
                    m_queue.pop_front();
                }
                ops.clear();
                for (const Chunk &chunk : batch)
                    chunk.ops.decode(ops);
            }
            lastStart = std::chrono::steady_clock::now();
            QElapsedTimer took; // the commit, then each part of the upkeep, for the debug log
            took.start();
            if (!openWriter(db) || !commit(db, ops)) {
                // Never skip a batch: what it holds may have been promised as soon as durable.
                // The engine host learns the disk's trouble and stops granting meanwhile.
                m_failed.fetch_add(1);
                reportHealth(m_lastError);
                if (giveUpAtClose(ops.size()))
                    break;
                std::unique_lock lock(m_mutex);
                const bool stopping = m_stopping;
                m_wake.wait_for(lock, std::chrono::milliseconds(backoffMs),
                                [this, stopping] { return m_stopping != stopping; });
                backoffMs = std::min(backoffMs * 2, m_options.retryMaxMs);
                continue;
            }
            m_commitTimes.record(std::chrono::steady_clock::now() - lastStart);
            reportHealth(StoreHealth{});
            if (took.elapsed() >= 20)
                qCDebug(lcStore) << "a commit of" << ops.size() << "operations took"
                                 << took.elapsed() << "ms";
            backoffMs = m_options.retryMinMs;
            const std::uint64_t ticket = batch.back().ticket;
            // The batch's buffers go back for reuse (a few; an outsized one is let go).
            {
                std::lock_guard lock(m_mutex);
                for (Chunk &chunk : batch) {
                    if (m_spare.size() >= kSpareBuffers)
                        break;
                    if (chunk.ops.capacity() > kSpareBytes)
                        continue;
                    chunk.ops.clear();
                    m_spare.push_back(std::move(chunk.ops));
                }
            }
            batch.clear();
            m_durable.store(ticket);
            if (m_statements && m_statements->appendPart != m_pokedPart) {
                m_pokedPart = m_statements->appendPart; // one sealed, or the first of this run
                if (m_archiver)
                    m_archiver->poke();
            }
            // The answers go out at the engine thread's next turn; one that may be asleep is
            // woken for them (followTurns).
            if (!m_followingTurns.load() || m_engineMaySleep.exchange(false)) {
                m_wakes.fetch_add(1, std::memory_order_relaxed);
                QMetaObject::invokeMethod(this, &SqliteStore::deliverDurable, Qt::QueuedConnection);
            }
            // Upkeep after the answer is on its way: retention now and then, and dropping a
            // partition the archiver has copied while nothing waits (or every 64 batches, so it
            // never starves).
            const std::uint64_t batches = m_batches.fetch_add(1) + 1;
            const auto upkeepStart = std::chrono::steady_clock::now();
            took.start();
            if (batches % std::max<std::uint64_t>(1, m_options.retentionEvery) == 0)
                applyRetention(db);
            const qint64 retentionMs = took.restart();
            bool idle = false;
            {
                std::lock_guard lock(m_mutex);
                idle = m_queue.empty();
            }
            streaming = !idle;
            if (idle || batches % 64 == 0)
                maintainLedger(db);
            const qint64 dropMs = took.restart();
            // The reader thread's checkpoints copy the WAL while commits go on, but only a
            // checkpoint between two commits can finish, and only a finished one lets the next
            // commit start the WAL over. By now little is left to copy, so this one is short.
            if (upkeepStart - lastCheckpoint >=
                std::chrono::milliseconds(m_options.checkpointEveryMs)) {
                QSqlQuery(db).exec(QStringLiteral("PRAGMA wal_checkpoint(PASSIVE)"));
                lastCheckpoint = upkeepStart;
            }
            const qint64 checkpointMs = took.elapsed();
            if (retentionMs + dropMs + checkpointMs >= 5)
                qCDebug(lcStore) << "ledger upkeep took" << retentionMs + dropMs + checkpointMs
                                 << "ms: retention" << retentionMs << "archived drop" << dropMs
                                 << "checkpoint" << checkpointMs;
        }
        m_statements.reset();
        db.close();
    }
    QSqlDatabase::removeDatabase(name);
    {
        std::lock_guard lock(m_mutex);
        m_writerExited = true;
    }
    m_exited.notify_all();
}

bool SqliteStore::giveUpAtClose(std::size_t batchOps)
{
    std::lock_guard lock(m_mutex);
    if (!m_stopping || std::chrono::steady_clock::now() < m_closeDeadline)
        return false;
    // Closing, and the disk still refuses: what is left is counted and named, not waited for.
    const std::uint64_t lost = batchOps + m_queuedOps;
    m_lost.fetch_add(lost);
    m_queue.clear();
    m_queuedOps = 0;
    m_queuedEvents = 0;
    qCCritical(lcStore) << "closing with" << lost
                        << "operations the disk would not take:" << m_lastError.phrase();
    return true;
}

bool SqliteStore::commit(QSqlDatabase &db, const std::vector<StoreOp> &ops)
{
    sqlite3 *handle = sqliteHandle(db);
    // Prepared once per connection, BEGIN and COMMIT too: preparing costs more than most of the
    // statements.
    if (!m_statements) {
        m_statements = std::make_unique<Statements>(Statements{
            {handle, "BEGIN"},
            {handle, "COMMIT"},
            {handle, "ROLLBACK"},
            {handle, "INSERT INTO leases VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (lease_id) DO "
                     "UPDATE SET resource = excluded.resource, holder = excluded.holder, mode = "
                     "excluded.mode, token = excluded.token, granted_at = excluded.granted_at, "
                     "expires_at = excluded.expires_at, ttl_ms = excluded.ttl_ms"},
            {handle, "DELETE FROM leases WHERE lease_id = ?"},
            {handle, "INSERT INTO agents VALUES (?, ?, ?, ?, ?) ON CONFLICT (did) DO UPDATE SET "
                     "trust = excluded.trust, releases = excluded.releases, expiries = "
                     "excluded.expiries, suspended = excluded.suspended"},
            {handle, "UPDATE meta SET value = MAX(CAST(value AS INTEGER), ?) WHERE key = "
                     "'token_end'"},
            {handle, "INSERT OR REPLACE INTO keys VALUES (?, ?, ?, ?)"},
            {}, // append: prepared for the partition the first event goes to
            ~0ull,
        });
    }
    Statements &st = *m_statements;
    bool ok = true;
    // Runs `q` (its values bound by the caller); a failure is remembered and ends the batch.
    auto run = [this, &ok](SqliteStatement &q) {
        if (!q.run()) {
            m_lastError = q.health();
            qCDebug(lcStore) << "write failed:" << m_lastError.detail.c_str();
            ok = false;
        }
    };
    run(st.begin);
    if (!ok) {
        qCWarning(lcStore) << "cannot begin a transaction:" << m_lastError.detail.c_str();
        return false;
    }
    // Within one batch only the last word on a lease or an agent counts: a lease granted and
    // released in the same batch is never written, a lease extended twice is written once, an
    // agent row is written once.
    std::unordered_map<std::string_view, std::size_t> lastDrop, lastPut, lastAgent;
    for (std::size_t index = 0; index < ops.size(); ++index) {
        if (const auto *d = std::get_if<DropLease>(&ops[index]))
            lastDrop[d->leaseId] = index;
        else if (const auto *p = std::get_if<PutLease>(&ops[index]))
            lastPut[p->lease.leaseId] = index;
        else if (const auto *a = std::get_if<PutAgent>(&ops[index]))
            lastAgent[a->agent.actorDid] = index;
    }
    auto superseded = [&](const StoreOp &op, std::size_t at) {
        if (const auto *p = std::get_if<PutLease>(&op)) {
            auto it = lastDrop.find(p->lease.leaseId);
            return (it != lastDrop.end() && it->second > at) || lastPut[p->lease.leaseId] != at;
        }
        if (const auto *a = std::get_if<PutAgent>(&op))
            return lastAgent[a->agent.actorDid] != at;
        return false;
    };
    std::string facts; // an event's encoded facts, alive until its insert has run
    for (std::size_t index = 0; index < ops.size() && ok; ++index) {
        const StoreOp &item = ops[index];
        if (superseded(item, index))
            continue;
        std::visit(Overloaded{
                       [&](const PutLease &p) {
                           const LeaseInfo &l = p.lease;
                           SqliteStatement &q = st.putLease;
                           q.text(1, l.leaseId);
                           q.text(2, l.resource);
                           q.text(3, l.holder);
                           q.text(4, modeName(l.mode));
                           q.integer(5, std::int64_t(l.token));
                           q.integer(6, l.grantedAt);
                           q.integer(7, l.expiresAt);
                           q.integer(8, l.ttlMs);
                           run(q);
                       },
                       [&](const DropLease &d) {
                           st.dropLease.text(1, d.leaseId);
                           run(st.dropLease);
                       },
                       [&](const PutAgent &p) {
                           const AgentState &a = p.agent;
                           SqliteStatement &q = st.putAgent;
                           q.text(1, a.actorDid);
                           q.real(2, a.trust);
                           q.integer(3, std::int64_t(a.releases));
                           q.integer(4, std::int64_t(a.expiries));
                           q.integer(5, a.suspended ? 1 : 0);
                           run(q);
                       },
                       [&](const AppendEvent &a) {
                           const LedgerEvent &e = a.event;
                           if (!useLedgerPartition(
                                   db, ledgerparts::partOf(e.seq, m_options.partitionRows))) {
                               ok = false;
                               return;
                           }
                           facts = encodeFacts(e.facts);
                           SqliteStatement &q = st.append;
                           q.integer(1, std::int64_t(e.seq));
                           q.integer(2, e.at);
                           q.text(3, eventKindName(e.kind));
                           q.text(4, e.actorDid);
                           q.text(5, e.resource);
                           q.text(6, e.leaseId);
                           q.integer(7, std::int64_t(e.token));
                           q.integer(8, e.ttlMs);
                           q.text(9, e.reason);
                           q.blob(10, facts);
                           run(q);
                       },
                       [&](const ReserveTokens &r) {
                           if (r.end == 0)
                               return;
                           st.reserve.integer(1, std::int64_t(r.end));
                           run(st.reserve);
                       },
                       [&](const PutKey &p) {
                           const StoredKey &k = p.key;
                           SqliteStatement &q = st.putKey;
                           q.text(1, k.digestHex);
                           q.text(2, k.did);
                           q.text(3, k.role);
                           q.integer(4, k.createdAt);
                           run(q);
                       },
                   },
                   item);
    }
    if (ok)
        run(st.commit);
    if (!ok) {
        qCDebug(lcStore) << "batch of" << ops.size() << "operations not committed; retrying";
        st.rollback.run();
        st.appendPart = ~0ull; // a partition created in the batch is gone with it
        // After an I/O error SQLite may keep the connection in a state only a reopen clears.
        if (m_lastError.problem != StoreHealth::Problem::Locked) {
            m_statements.reset();
            db.close();
        }
        return false;
    }
    return true;
}

bool SqliteStore::useLedgerPartition(QSqlDatabase &db, std::uint64_t part)
{
    Statements &st = *m_statements;
    if (part == st.appendPart)
        return true;
    // A new partition: created in the batch's transaction, so a rollback takes it back too
    // (and forgets appendPart). A sequence number is never reused; were one replayed, the first
    // word stands.
    if (!ledgerparts::create(db, part)) {
        m_lastError = healthOf(db.lastError());
        return false;
    }
    st.append = SqliteStatement(
        sqliteHandle(db), QStringLiteral("INSERT OR IGNORE INTO %1 VALUES (?, ?, ?, ?, ?, ?, ?, ?, "
                                         "?, ?)")
                              .arg(ledgerparts::table(part))
                              .toStdString());
    if (!st.append.valid()) {
        m_lastError = st.append.health();
        return false;
    }
    st.appendPart = part;
    return true;
}

void SqliteStore::applyRetention(QSqlDatabase &db)
{
    ledgerparts::retain(db, bounds(), ledgerparts::newest(db));
}

bool SqliteStore::maintainLedger(QSqlDatabase &db)
{
    std::uint64_t part = 0;
    {
        std::lock_guard lock(m_archived->mutex);
        if (m_archived->parts.empty())
            return false;
        part = m_archived->parts.front();
    }
    // Never the partition being appended to (the archiver only reports sealed ones).
    const bool open =
        m_statements && m_statements->appendPart != ~0ull && part >= m_statements->appendPart;
    if (!open && !QSqlQuery(db).exec(
                     QStringLiteral("DROP TABLE IF EXISTS %1").arg(ledgerparts::table(part))))
        return false; // kept for the next pass: reads take the archive's copy meanwhile
    std::lock_guard lock(m_archived->mutex);
    m_archived->parts.pop_front();
    return true;
}

} // namespace leasehold
