#pragma once

#include "etcdclient.h"
#include "leasestore.h"
#include "sqlitestore.h"

#include <QObject>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

namespace leasehold::etcd {

// The LeaseStore of cluster mode: the engine's state in etcd, written only by the leader and
// fenced by its election key, so a deposed leader's writes fail.
//
// Keys under the prefix (values are etcdcodec.h's JSON):
//   state/lease/<lease id>   a live lease        state/agent/<did>   an agent's trust
//   state/key/<digest>       a minted key        state/token_end     the token high-water mark
//   ledger/<seq, 20 digits>  a run of ledger events (a JSON array) under its last one's number;
//                            together the newest `ringEvents` or a few more (a ring: etcd is
//                            no log store)
//
// A writer thread takes what is queued (up to maxBatch operations), keeps only the last word
// on each lease, agent and key, and commits it in as few transactions as etcd's limits allow
// (maxTxnOps operations, maxTxnBytes of request), each comparing the fence; only when all of a
// batch's transactions are committed is its ticket reported durable. A failed transaction is
// retried with back-off (its writes are idempotent: puts of final values and deletes), and the
// store reports itself unavailable meanwhile; a transaction whose fence no longer holds is
// never retried: the store reports "no longer leading" and commits nothing more (the instance
// steps down; what it had not made durable was never answered).
//
// The ledger's full history lives in a local SQLite store beside each instance (ledger reads
// are served from it). A standby keeps it up with the ring (follow()), so that one standing
// by through more than a ring's worth of events still has them all; load() first copies in
// whatever of the ring it has not seen yet.
class EtcdStore : public QObject, public LeaseStore
{
    Q_OBJECT

public:
    struct Options
    {
        Client::Options etcd;
        std::string prefix = "leasehold/";
        SqliteStore::Options localLedger; // this instance's copy of the ledger
        std::size_t maxBatch = 4096;
        std::size_t maxTxnOps = 128;         // etcd's --max-txn-ops default
        std::size_t maxTxnBytes = 1'000'000; // under etcd's 1.5 MiB request limit, base64 and all
        std::uint64_t ringEvents = 50'000;
        std::size_t maxQueuedEvents = 100'000;
        int retryMinMs = 20;
        int retryMaxMs = 1000;
        int closeTimeoutMs = 3000;
    };

    // `fence` is the compare every write carries (Election::fence() of the instance that
    // leads); set it with setFence() before submitting.
    explicit EtcdStore(Options options, QObject *parent = nullptr);
    ~EtcdStore() override;

    void setFence(const Compare &fence);
    // While the leader cannot confirm its session (Election::Role::Lapsed) the store reports
    // itself unavailable, so the engine grants nothing, whatever the writer manages; writes
    // already queued still go out fenced (one that commits was made while the key stood).
    void setLapsed(bool lapsed);

    // Standing by: opens the local ledger (on this thread) and, on a thread of its own, copies
    // the ring's new events into it every `everyMs`, until load() or close(). False with
    // `error` when the local ledger cannot be opened; etcd out of reach is only retried.
    bool follow(std::string *error, int everyMs = 500);
    // The last ledger event the local ledger holds (or has been handed) from the ring.
    std::uint64_t followedSeq() const { return m_followedSeq.load(); }
    // Standing by: how long ago the local ledger last caught up with the ring (the health
    // check's cluster lag); -1 before it first has.
    std::int64_t followAgeMs() const;

    std::optional<StoredState> load(std::string *error) override;
    std::uint64_t submit(StoreOps &ops) override;
    void setDurableCallback(std::function<void(std::uint64_t)> callback) override;
    void setHealthCallback(std::function<void(const StoreHealth &)> callback) override;
    std::vector<LedgerEvent> ledger(std::uint64_t since, std::size_t limit,
                                    const LedgerFilter &filter) override;
    void readLedger(std::uint64_t since, std::size_t limit, const LedgerFilter &filter,
                    std::function<void(std::vector<LedgerEvent>)> done) override;
    StoreStats stats() const override;
    void close() override;

    StoreHealth health() const;
    bool deposed() const { return m_deposed.load(); }

private:
    struct Chunk
    {
        std::uint64_t ticket;
        StoreOps ops;
    };
    enum class Outcome { Committed, Failed, Deposed };

    void writerLoop();
    void followLoop(int everyMs);
    void stopFollowing();
    // Copies the ring's events after followedSeq() into the local ledger, a page at a time;
    // false with `error` when etcd cannot be read.
    bool copyRing(Client &client, std::string *error);
    bool openLocal(std::string *error);
    // The batch as transactions (each within etcd's limits), last words only.
    std::vector<std::vector<Op>> transactions(const std::vector<StoreOp> &ops) const;
    Outcome commit(Client &client, const Compare &fence, const std::vector<std::vector<Op>> &txns,
                   std::string *problem);
    // The writer's own view of etcd; what is reported is that, or the lapse if there is one.
    void reportHealth(const StoreHealth &health);
    void publishHealth(std::unique_lock<std::mutex> &lock);
    std::string key(const char *kind, const std::string &name) const;

    Options m_options;
    std::unique_ptr<SqliteStore> m_ledger;
    std::function<void(std::uint64_t)> m_onDurable;
    std::function<void(const StoreHealth &)> m_onHealth;

    bool m_localOpen = false; // the local ledger is loaded (by follow() or load())
    std::atomic<std::uint64_t> m_followedSeq{0};
    std::atomic<std::int64_t> m_caughtUpAt{-1}; // steady clock, ms
    std::thread m_follower;
    bool m_stopFollowing = false;

    std::thread m_writer;
    mutable std::mutex m_mutex;
    std::condition_variable m_wake;
    std::deque<Chunk> m_queue;
    std::optional<Compare> m_fence;
    std::size_t m_queuedEvents = 0;
    std::size_t m_queuedOps = 0;
    bool m_stopping = false;
    bool m_open = false;
    std::chrono::steady_clock::time_point m_closeDeadline;
    StoreHealth m_writerHealth;
    StoreHealth m_health;    // reported
    StoreHealth m_delivered; // last handed to m_onHealth, on this object's thread only
    bool m_lapsed = false;

    std::uint64_t m_submitted = 0; // engine thread
    std::atomic<std::uint64_t> m_durable{0};
    std::atomic<std::uint64_t> m_batches{0};
    CommitTimes m_commitTimes; // filled by the writer thread
    std::atomic<std::uint64_t> m_dropped{0};
    std::atomic<std::uint64_t> m_failed{0};
    std::atomic<std::uint64_t> m_lost{0};
    std::atomic<bool> m_deposed{false};
};

} // namespace leasehold::etcd
