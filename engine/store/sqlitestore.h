#pragma once

#include "filtercache.h"
#include "leasestore.h"
#include "ledgerarchive.h"
#include "ledgerparts.h"
#include "sqlitestatement.h"

#include <QObject>
#include <QSqlQuery>
#include <QString>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

class QSqlDatabase;

namespace leasehold {

// The LeaseStore on SQLite (QtSql, WAL, synchronous=FULL) in one file.
//
// A writer thread takes whatever is queued - up to one batch - and commits it in one
// transaction, so one fsync covers every decision in the batch (group commit); then it reports
// the batch's highest ticket to the engine thread. The engine thread only appends to the queue
// and reads the ledger through its own connection (WAL lets it read while the writer writes).
// Under a steady stream from a busy engine thread the writer waits out a short commit window
// before each batch, so a batch gathers more decisions per fsync (commitWindowUs); once the engine
// thread's loop goes idle nothing more is coming and the window ends. A batch that fails to commit
// is retried with back-off, never skipped: nothing is reported durable that is not. The first
// failure reports the store degraded (disk full, I/O error, read-only, locked); the first commit
// after it reports it healthy again. close() gives up on a disk that keeps refusing after
// `closeTimeoutMs` and says how much it could not write.
//
// The ledger is partitioned (ledgerparts.h): appends touch one unindexed table, sealed
// partitions get their read indexes while the writer is idle, retention drops whole partitions
// and reads apply `retainRows` and `retainMs` exactly. WAL checkpoints run on the reader
// thread's connection, never inside the writer's commits.
class SqliteStore : public QObject, public LeaseStore
{
    Q_OBJECT

public:
    struct Options
    {
        QString path;
        QString archivePath = {}; // sealed ledger partitions; empty: next to path (ledgerarchive.h)
        std::size_t maxQueuedEvents = 100'000;
        std::size_t maxBatch = 4096;
        std::uint64_t retainRows = 1'000'000;
        std::int64_t retainMs = std::int64_t(30) * 24 * 3600 * 1000;
        std::uint64_t retentionEvery = 256;   // batches between retention passes
        std::uint64_t partitionRows = 16'384; // ledger events per partition (see ledgerparts.h)
        int checkpointEveryMs = 200;          // how often the reader thread checkpoints the WAL
        // The WAL file is reused rather than regrown after each checkpoint, so it would keep
        // the size of the longest stretch between two checkpoints ever seen; once a checkpoint
        // lets the writer start it over, it is cut back to this (journal_size_limit).
        std::int64_t walLimitBytes = std::int64_t(16) << 20;
        // Group commit under a stream of decisions: when the last commit found more waiting,
        // the next one starts no sooner than this after it started (or once maxBatch ops are
        // queued, or the engine thread's loop goes idle: see followTurns), so one fsync covers
        // more decisions. A decision arriving at an idle writer is committed at once. 0: never
        // wait.
        int commitWindowUs = 250;
        int retryMinMs = 10;       // back-off after a failed commit, doubling...
        int retryMaxMs = 1000;     // ...up to this
        int closeTimeoutMs = 3000; // how long close() keeps retrying a refusing disk
    };

    explicit SqliteStore(Options options, QObject *parent = nullptr);
    ~SqliteStore() override;

    std::optional<StoredState> load(std::string *error) override;
    std::uint64_t submit(StoreOps &ops) override;
    void setDurableCallback(std::function<void(std::uint64_t)> callback) override;
    void setHealthCallback(std::function<void(const StoreHealth &)> callback) override;
    StoreHealth health() const;
    // True when close() returned while the writer was still inside a disk call that had not
    // come back (a hung mount): the object must then be left alive, never destroyed.
    bool writerStuck() const { return m_stuck; }
    std::vector<LedgerEvent> ledger(std::uint64_t since, std::size_t limit,
                                    const LedgerFilter &filter) override;
    void readLedger(std::uint64_t since, std::size_t limit, const LedgerFilter &filter,
                    std::function<void(std::vector<LedgerEvent>)> done) override;
    StoreStats stats() const override;
    void close() override;

private:
    // One submission: its operations travel and commit together.
    struct Chunk
    {
        std::uint64_t ticket;
        StoreOps ops;
    };

    // sqlitestore_writer.cpp
    void writerLoop();
    bool openWriter(QSqlDatabase &db);
    bool commit(QSqlDatabase &db, const std::vector<StoreOp> &ops);
    void reportHealth(const StoreHealth &health);
    // Closing and past the deadline: drops what is left (counted) so the writer can stop.
    bool giveUpAtClose(std::size_t batchOps);
    void applyRetention(QSqlDatabase &db);
    // Points the append statement at ledger partition `part`, creating it when new.
    bool useLedgerPartition(QSqlDatabase &db, std::uint64_t part);

    // Drops one partition the archiver has made durable in the archive; false when none waits.
    bool maintainLedger(QSqlDatabase &db);
    LedgerBounds bounds() const
    {
        return {m_options.partitionRows, m_options.retainRows, m_options.retainMs};
    }

    bool createOrCheckSchema(QSqlDatabase &db, std::string *error);
    // The reader thread: its own connection, one job at a time.
    void pagerLoop();
    void stopPager();

    // The writer's prepared statements (writer thread only).
    struct Statements
    {
        SqliteStatement begin, commit, rollback;
        SqliteStatement putLease, dropLease, putAgent, reserve, putKey;
        SqliteStatement append;           // into partition appendPart
        std::uint64_t appendPart = ~0ull; // none prepared yet
    };
    std::unique_ptr<Statements> m_statements;

    Options m_options;
    QString m_readerName;
    bool m_open = false;
    std::function<void(std::uint64_t)> m_onDurable;
    std::function<void(const StoreHealth &)> m_onHealth;
    StoreHealth m_lastError; // writer thread: what the last failure said
    // Partitions archived and waiting for the writer to drop them from the live file. Shared
    // with the archiver's callback, so a late one never touches a store that is gone.
    struct Archived
    {
        std::mutex mutex;
        std::deque<std::uint64_t> parts;
    };
    std::shared_ptr<Archived> m_archived = std::make_shared<Archived>();
    std::unique_ptr<LedgerArchiver> m_archiver;
    std::uint64_t m_pokedPart = ~0ull; // writer thread: the open partition the archiver knows

    std::thread m_writer;
    std::thread m_pager;
    std::mutex m_pagerMutex;
    std::condition_variable m_pagerWake;
    std::deque<std::function<void(QSqlDatabase &)>> m_pagerJobs;
    bool m_pagerStopping = false;
    ledgerparts::FilterCache m_pagerFilters; // the pager thread's
    mutable std::mutex m_mutex;
    std::condition_variable m_wake;
    std::deque<Chunk> m_queue;
    // Buffers the writer is done with, handed back by submit(): the engine thread refills them
    // instead of allocating one per submission that the writer thread would free.
    std::vector<StoreOps> m_spare;
    std::size_t m_queuedEvents = 0;
    std::size_t m_queuedOps = 0;
    bool m_stopping = false;
    bool m_writerWaiting = false;   // only then does a submission need to wake it
    bool m_writerGathering = false; // in a commit window: wake it once a batch is full...
    bool m_engineIdle = false;      // ...or once the engine thread goes idle (followTurns)
    bool m_writerExited = false;
    std::condition_variable m_exited;
    std::chrono::steady_clock::time_point m_closeDeadline;
    StoreHealth m_health; // as last reported
    bool m_stuck = false;

    std::uint64_t m_submitted = 0; // engine thread
    // Durability reaches the engine thread at the start of its next event-loop turn. The
    // writer wakes the loop with a queued call only when it may be asleep: from its last
    // aboutToBlock() until its next submission. Under load the thread is at work when a commit
    // ends, so most commits cost it no wake-up. Where the loop's turns cannot be followed (a
    // GLib dispatcher, under the console), every commit wakes it.
    void followTurns();
    void deliverDurable();
    std::uint64_t m_delivered = 0;             // engine thread
    std::atomic<bool> m_followingTurns{false}; // set once by the engine thread
    std::atomic<bool> m_engineMaySleep{false};
    std::atomic<std::uint64_t> m_wakes{0};
    std::atomic<std::uint64_t> m_durable{0};
    std::atomic<std::uint64_t> m_batches{0};
    CommitTimes m_commitTimes; // filled by the writer thread
    std::atomic<std::uint64_t> m_dropped{0};
    std::atomic<std::uint64_t> m_failed{0};
    std::atomic<std::uint64_t> m_lost{0};
};

} // namespace leasehold
