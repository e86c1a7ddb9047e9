// SqliteStore: the queue the engine thread submits to, what it learns back (durable tickets,
// health), its figures, and closing. The parts: sqlitestore_schema.cpp (layout, migrations),
// sqlitestore_load.cpp (the last run's state), sqlitestore_writer.cpp (the writer thread),
// sqlitestore_reads.cpp (ledger reads on the pager thread).

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
