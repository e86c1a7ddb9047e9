#pragma once

#include "committimes.h"
#include "storeops.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace leasehold {

// What a previous run left behind.
struct StoredState
{
    std::vector<LeaseInfo> leases;
    std::vector<AgentState> agents;
    std::vector<StoredKey> keys;
    std::uint64_t tokenEnd = 1; // the first token this run may issue
    std::uint64_t lastSeq = 0;  // the last ledger sequence number written
};

struct StoreStats
{
    std::uint64_t submitted = 0;       // tickets handed out
    std::uint64_t durable = 0;         // the highest ticket committed
    std::uint64_t batches = 0;         // transactions committed
    std::uint64_t queued = 0;          // operations waiting for the writer
    std::uint64_t droppedEvents = 0;   // ledger events dropped because the queue was full
    std::uint64_t failedBatches = 0;   // transactions that did not commit (logged)
    std::uint64_t lostOps = 0;         // operations given up at close because the disk refused them
    bool archive = false;              // sealed ledger partitions move to a second file
    std::uint64_t archivedParts = 0;   // partitions moved there since the start
    std::uint64_t archiveFailures = 0; // attempts to move one that failed (logged, retried)
    std::uint64_t archiveBacklog = 0;  // sealed partitions in the live file not yet moved
    CommitTimes::Counts commitTimes;   // how long the committed batches took
    std::uint64_t wakes = 0;           // commits that woke the engine thread's loop to say so
};

// Whether the store can make changes durable now. A degraded store keeps retrying on its own
// and reports ok again after its first successful commit; nothing it reported durable is lost.
struct StoreHealth
{
    enum class Problem {
        None,
        DiskFull,
        IoError,
        ReadOnly,
        Locked,
        CannotOpen,
        Unresponsive,
        EtcdUnavailable, // cluster mode: etcd cannot be reached, or has no quorum
        NotLeading,      // cluster mode: this instance's election key is gone
    };
    Problem problem = Problem::None;
    std::string detail; // what the storage said, for the log and the operator

    bool ok() const { return problem == Problem::None; }
    // "disk_full", "io_error", "read_only", "locked", "cannot_open", "unresponsive",
    // "etcd_unavailable", "not_leading" or "ok".
    const char *reasonName() const;
    // "the disk is full" and so on, for sentences an agent or an operator reads.
    const char *phrase() const;
    bool operator==(const StoreHealth &other) const = default;
};

// Where the engine's state goes to survive the process. The engine host submits the changes
// each decision made and withholds answers until their ticket is durable (group commit); the
// store never makes the engine wait. A second backend (etcd, for several instances sharing one
// authority) implements the same interface.
//
// Thread: called from the engine thread; the durable callback arrives on it too.
class LeaseStore
{
public:
    virtual ~LeaseStore() = default;

    // Reads what the previous run left; nothing (with `error` set) when the store is unusable.
    virtual std::optional<StoredState> load(std::string *error) = 0;
    // Queues what `ops` holds (one buffer, moved, not copied) and returns its ticket; never
    // blocks; `ops` is left empty, perhaps with the storage of a buffer the store is done with
    // (so buffers go back to the thread that made them, not freed on another). Ledger events beyond
    // the queue's bound are dropped and counted; state changes are never dropped.
    virtual std::uint64_t submit(StoreOps &ops) = 0;
    // Called with the highest durable ticket after each commit.
    virtual void setDurableCallback(std::function<void(std::uint64_t)> callback) = 0;
    // Called when the store's health changes (from ok to degraded, between problems, and back).
    virtual void setHealthCallback(std::function<void(const StoreHealth &)> callback) = 0;
    // Ledger events with seq > since that match `filter`, oldest first.
    virtual std::vector<LedgerEvent> ledger(std::uint64_t since, std::size_t limit,
                                            const LedgerFilter &filter) = 0;
    // The same, read off the caller's thread: `done` is called on the store's reader thread
    // (so a 100 000-row export never holds up the engine). Requests made after close() are
    // answered with an empty page.
    virtual void readLedger(std::uint64_t since, std::size_t limit, const LedgerFilter &filter,
                            std::function<void(std::vector<LedgerEvent>)> done) = 0;
    virtual StoreStats stats() const = 0;
    // Commits everything queued and stops the writer. Returns within a bound whatever the disk
    // does; what could not be committed by then is counted in stats().lostOps and logged.
    virtual void close() = 0;
};

} // namespace leasehold
