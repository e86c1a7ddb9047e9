// SqliteStore: ledger reads, on the pager thread (which also checkpoints the WAL) so that a big
// read never holds up the engine or the writer.

#include "sqlitestore.h"
#include "sqlitestore_p.h"
#include "threadname.h"

#include <QElapsedTimer>
#include <QFileInfo>
#include <QLoggingCategory>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QVariant>

namespace leasehold {

using ledgerparts::attachArchive;

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

} // namespace leasehold
