#include "ledgerarchive.h"
#include "threadname.h"

#include <QDir>
#include <QFileInfo>
#include <QLoggingCategory>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QVariant>

#include <algorithm>
#include <utility>

namespace leasehold {

namespace {

Q_LOGGING_CATEGORY(lcArchive, "leasehold.store.archive")

constexpr const char *kLive = "live";

bool exec(QSqlDatabase &db, const QString &sql)
{
    QSqlQuery q(db);
    if (q.exec(sql))
        return true;
    qCDebug(lcArchive) << sql << "failed:" << q.lastError().text();
    return false;
}

} // namespace

LedgerArchiver::LedgerArchiver(Options options, std::function<void(std::uint64_t)> archived)
    : m_options(std::move(options))
    , m_archived(std::move(archived))
{}

LedgerArchiver::~LedgerArchiver()
{
    if (!stop())
        qCritical("leasehold: the ledger archiver did not come back from the disk");
}

QString LedgerArchiver::pathFor(const QString &livePath)
{
    const QFileInfo live(livePath);
    return live.dir().filePath(live.completeBaseName() + QStringLiteral("-ledger.db"));
}

bool LedgerArchiver::prepare(const QString &archivePath, std::string *error)
{
    const QString name = QStringLiteral("leasehold-archive-prepare");
    bool ok = false;
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), name);
        db.setDatabaseName(archivePath);
        QSqlQuery q(db);
        ok = db.open() && q.exec(QStringLiteral("PRAGMA journal_mode = WAL")) &&
             q.exec(QStringLiteral("CREATE TABLE IF NOT EXISTS ledger_filters (part INTEGER "
                                   "PRIMARY KEY, probes INTEGER NOT NULL, bits BLOB NOT NULL)"));
        if (!ok)
            *error = "cannot open the ledger archive " + archivePath.toStdString() + ": " +
                     (db.isOpen() ? q.lastError() : db.lastError()).text().toStdString();
        db.close();
    }
    QSqlDatabase::removeDatabase(name);
    return ok;
}

void LedgerArchiver::start()
{
    m_thread = std::thread([this] { loop(); });
}

void LedgerArchiver::poke()
{
    {
        std::lock_guard lock(m_mutex);
        m_poked = true;
    }
    m_wake.notify_all();
}

bool LedgerArchiver::stop(std::chrono::milliseconds bound)
{
    std::unique_lock lock(m_mutex);
    m_stopping = true;
    m_wake.notify_all();
    if (!m_thread.joinable())
        return true;
    if (!m_wake.wait_for(lock, bound, [this] { return m_exited; })) {
        m_thread.detach();
        return false;
    }
    lock.unlock();
    m_thread.join();
    return true;
}

void LedgerArchiver::loop()
{
    nameThisThread("lh-archiver");
    const QString name = QStringLiteral("leasehold-archiver-%1").arg(quintptr(this));
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), name);
        db.setDatabaseName(m_options.archivePath);
        bool ready = false;
        bool failing = false;
        for (;;) {
            if (!ready) {
                QSqlQuery attach(db);
                // secure_delete FAST (set before the ATTACH, so both files take it): Debian
                // builds SQLite with it on, and then retention's DROP TABLE zeroed every page of
                // a dropped partition and wrote them through the WAL, megabytes each time, on
                // the disk the writer's commits wait for.
                ready = db.open() && exec(db, QStringLiteral("PRAGMA synchronous = FULL")) &&
                        exec(db, QStringLiteral("PRAGMA busy_timeout = 250")) &&
                        exec(db, QStringLiteral("PRAGMA secure_delete = FAST")) &&
                        attach.prepare(QStringLiteral("ATTACH DATABASE ? AS live"));
                attach.addBindValue(m_options.livePath);
                ready = ready && attach.exec();
            }
            bool failed = !ready;
            const bool did = ready && step(db, failed);
            const bool wasFailing = std::exchange(failing, failed);
            if (failed) {
                if (!wasFailing)
                    qCWarning(lcArchive)
                        << "cannot move sealed ledger partitions into" << m_options.archivePath
                        << "- they stay in the live file meanwhile; retrying";
                m_failures.fetch_add(1);
                db.close(); // after an I/O error only a reopen clears some states
                ready = false;
            }
            std::unique_lock lock(m_mutex);
            if (!did || failed) {
                const int waitMs = failed ? m_options.retryMs : m_options.idleMs;
                m_wake.wait_for(lock, std::chrono::milliseconds(waitMs),
                                [this] { return m_stopping || m_poked; });
            }
            m_poked = false;
            if (m_stopping)
                break;
        }
        db.close();
    }
    QSqlDatabase::removeDatabase(name);
    std::lock_guard lock(m_mutex);
    m_exited = true;
    m_wake.notify_all();
}

bool LedgerArchiver::step(QSqlDatabase &db, bool &failed)
{
    const std::vector<std::uint64_t> live = ledgerparts::list(db, kLive);
    const std::optional<std::vector<std::uint64_t>> unindexed = ledgerparts::unindexed(db, kLive);
    if (!unindexed) {
        failed = true;
        return false;
    }
    const std::vector<std::uint64_t> done = ledgerparts::list(db, "main");
    if (!live.empty())
        m_reported.erase(m_reported.begin(), m_reported.lower_bound(live.front()));
    // Oldest first; the newest live partition is the one being appended to. The backlog is
    // counted here only: a step that did work is followed at once by another, which counts anew.
    std::uint64_t waiting = 0;
    for (std::size_t i = 0; i + 1 < live.size(); ++i)
        waiting += !std::binary_search(done.begin(), done.end(), live[i]) &&
                   std::binary_search(unindexed->begin(), unindexed->end(), live[i]);
    m_backlog.store(waiting);
    for (std::size_t i = 0; i + 1 < live.size(); ++i) {
        const std::uint64_t part = live[i];
        if (std::binary_search(done.begin(), done.end(), part)) {
            if (m_reported.insert(part).second)
                m_archived(part); // copied before a restart, or not yet dropped
            continue;
        }
        if (std::binary_search(unindexed->begin(), unindexed->end(), part)) {
            failed = !archiveOne(db, part);
            return !failed;
        }
        // Indexed in the live file by an earlier release: it stays; it needs only its filter.
        if (!m_filtered) {
            QSqlQuery q(db);
            q.setForwardOnly(true);
            if (!q.exec(QStringLiteral("SELECT part FROM live.ledger_filters UNION SELECT part "
                                       "FROM main.ledger_filters"))) {
                failed = true;
                return false;
            }
            m_filtered.emplace();
            while (q.next())
                m_filtered->insert(q.value(0).toULongLong());
        }
        if (m_filtered->count(part) == 0) {
            failed = !ledgerparts::summarize(
                db, QLatin1String(kLive) + QLatin1Char('.') + ledgerparts::table(part), part);
            if (!failed)
                m_filtered->insert(part);
            return !failed;
        }
    }
    // Retention, as the writer applies it to the live file, from the live file's newest event.
    const std::pair<std::uint64_t, TimeMs> newest = ledgerparts::newest(db, kLive);
    return newest.first > 0 && ledgerparts::retain(db, m_options.bounds, newest) > 0;
}

bool LedgerArchiver::archiveOne(QSqlDatabase &db, std::uint64_t part)
{
    // A deferred transaction: it writes the archive alone and only reads the live file, whose
    // writer it must never hold up (IMMEDIATE would take every attached file's write lock).
    if (!exec(db, QStringLiteral("BEGIN")))
        return false;
    if (!ledgerparts::archive(db, kLive, part) || !exec(db, QStringLiteral("COMMIT"))) {
        exec(db, QStringLiteral("ROLLBACK"));
        return false;
    }
    m_moved.fetch_add(1);
    if (m_filtered)
        m_filtered->insert(part);
    m_reported.insert(part);
    m_archived(part);
    return true;
}

} // namespace leasehold
