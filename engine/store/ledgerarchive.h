#pragma once

// The archiver: sealed ledger partitions move from the live database (leasehold.db) into a
// second file, the archive (leasehold-ledger.db), which gives them their read indexes and agent
// filter. The live file keeps the state and the partition being appended to.
//
// Why a second file: SQLite lets one connection write a file at a time. Built in the live file,
// a sealed partition's three indexes and filter held every commit back 8-16 ms a step, four
// steps a partition, which under a stream of decisions was the p99 (p99 4.6-6.3 ms without
// those steps, 6.8-12.6 ms with them, in one sitting). In a file of its own the build takes no
// lock the writer needs; the writer's part is one DROP TABLE (about 3 ms) after the copy is
// durable.
//
// Crash safety: a partition is copied, indexed and filtered in one transaction of the archive
// (synchronous = FULL) before the writer is told to drop it from the live file. Until then it is
// in both and reads take the archive's, complete by construction; a start finds such a pair and
// has the writer drop the live copy. The archive is derived data until then: nothing is
// acknowledged on its account.
//
// Partitions indexed in the live file by earlier releases stay there until retention drops
// them; the archiver only writes the filter of one that has none, into the archive's
// ledger_filters. The archive applies the same retention, measured from the live file's newest
// event.

#include "ledgerparts.h"

#include <QString>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <thread>

class QSqlDatabase;

namespace leasehold {

class LedgerArchiver
{
public:
    struct Options
    {
        QString livePath;
        QString archivePath;
        LedgerBounds bounds;
        int idleMs = 5000;  // how often it looks for work unprompted (the writer prompts it)
        int retryMs = 1000; // after a failed step (a sick disk): looked at again this late
    };

    // `archived(part)` runs on the archiver's thread once `part` is durable in the archive.
    LedgerArchiver(Options options, std::function<void(std::uint64_t)> archived);
    ~LedgerArchiver();

    // The archive next to `livePath`: leasehold.db -> leasehold-ledger.db.
    static QString pathFor(const QString &livePath);
    // Creates the archive file (WAL, its filter table) when missing; false with `error` when it
    // cannot be opened or is not a database.
    static bool prepare(const QString &archivePath, std::string *error);

    void start();
    void poke(); // a partition may have been sealed
    // Waits for the step under way (tens of milliseconds). False when it did not come back
    // within `bound` (a disk call that never returns): the thread is then left running, and
    // this object must be left alive, never destroyed.
    bool stop(std::chrono::milliseconds bound = std::chrono::seconds(5));
    std::uint64_t moved() const { return m_moved.load(); }
    std::uint64_t failures() const { return m_failures.load(); }
    // Sealed partitions in the live file still waiting to be copied, as of the last look: a
    // number that keeps growing means the archiver never catches up (a refusing archive disk,
    // or no CPU to spare), and the live file grows by those partitions meanwhile.
    std::uint64_t backlog() const { return m_backlog.load(); }

private:
    void loop();
    // One unit of work: archive one partition, or write one filter, or apply retention. False
    // when there was nothing to do; `failed` when the disk refused.
    bool step(QSqlDatabase &db, bool &failed);
    bool archiveOne(QSqlDatabase &db, std::uint64_t part);

    Options m_options;
    std::function<void(std::uint64_t)> m_archived;
    std::thread m_thread;
    std::mutex m_mutex;
    std::condition_variable m_wake;
    bool m_stopping = false;
    bool m_poked = false;
    bool m_exited = false;
    std::set<std::uint64_t> m_reported;                // archived parts the writer was told about
    std::optional<std::set<std::uint64_t>> m_filtered; // parts with a filter (either file)
    std::atomic<std::uint64_t> m_moved{0};
    std::atomic<std::uint64_t> m_failures{0};
    std::atomic<std::uint64_t> m_backlog{0};
};

} // namespace leasehold
