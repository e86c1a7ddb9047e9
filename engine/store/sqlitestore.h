#pragma once

#include "leasestore.h"

#include <QObject>
#include <QSqlQuery>
#include <QString>

#include <atomic>
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
// A batch that fails to commit is retried, never skipped: nothing is reported durable that is
// not.
//
// Retention keeps the ledger to `retainRows` rows and `retainMs` of history (by event time).
class SqliteStore : public QObject, public LeaseStore
{
    Q_OBJECT

public:
    struct Options
    {
        QString path;
        std::size_t maxQueuedEvents = 100'000;
        std::size_t maxBatch = 4096;
        std::uint64_t retainRows = 1'000'000;
        std::int64_t retainMs = std::int64_t(30) * 24 * 3600 * 1000;
        std::uint64_t retentionEvery = 256; // batches between retention passes
    };

    explicit SqliteStore(Options options, QObject *parent = nullptr);
    ~SqliteStore() override;

    std::optional<StoredState> load(std::string *error) override;
    std::uint64_t submit(StoreOps &ops) override;
    void setDurableCallback(std::function<void(std::uint64_t)> callback) override;
    std::vector<LedgerEvent> ledger(std::uint64_t since, std::size_t limit,
                                    const LedgerFilter &filter) override;
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
    bool commit(QSqlDatabase &db, const std::vector<StoreOp> &ops);
    void applyRetention(QSqlDatabase &db);

    bool createOrCheckSchema(QSqlDatabase &db, std::string *error);

    // The writer's prepared statements (writer thread only).
    struct Statements
    {
        QSqlQuery begin, commit, rollback;
        QSqlQuery putLease, dropLease, putAgent, append, reserve, putKey;
    };
    std::unique_ptr<Statements> m_statements;

    Options m_options;
    QString m_readerName;
    bool m_open = false;
    std::function<void(std::uint64_t)> m_onDurable;

    std::thread m_writer;
    mutable std::mutex m_mutex;
    std::condition_variable m_wake;
    std::deque<Chunk> m_queue;
    std::size_t m_queuedEvents = 0;
    std::size_t m_queuedOps = 0;
    bool m_stopping = false;
    bool m_writerWaiting = false; // only then does a submission need to wake it

    std::uint64_t m_submitted = 0; // engine thread
    std::atomic<std::uint64_t> m_durable{0};
    std::atomic<std::uint64_t> m_batches{0};
    std::atomic<std::uint64_t> m_dropped{0};
    std::atomic<std::uint64_t> m_failed{0};
};

} // namespace leasehold
