#pragma once

#include "clock.h"
#include "crossthreadref.h"
#include "functionref.h"
#include "healthcheck.h"
#include "leaseengine.h"
#include "leasestore.h"

#include <QObject>
#include <QThreadPool>
#include <QTimer>

#include <type_traits>

#include <deque>
#include <functional>
#include <memory>
#include <unordered_map>

class QAbstractEventDispatcher;

namespace leasehold {

// Owns the lease engine on one thread and drives its time: one single-shot timer is armed for
// the engine's earliest deadline after every call, so expiries, pin bounds and wait deadlines
// happen on time without polling. Keeps the recent ledger in a bounded ring and routes the
// outcome of each parked wait to whoever asked.
//
// Thread: everything here runs on the thread that owns the object (the engine thread).
class EngineHost : public QObject, private EngineListener
{
    Q_OBJECT

public:
    using WaitCallback = std::function<void(const WaitOutcome &)>;

    // The grants one answer carries, gathered while it is composed: if the answer can never be
    // delivered (the caller went away, the store could not make it durable), they are given
    // back rather than left to expire against a holder who never heard of them.
    struct Answer
    {
        std::vector<Grant> grants;
    };
    // Makes `answer` the one that grants made now belong to, for the scope's lifetime. The
    // transport opens one around each request; a parked wait keeps the one it was made in.
    class AnswerScope
    {
    public:
        AnswerScope(EngineHost &host, std::shared_ptr<Answer> answer)
            : m_host(host)
            , m_previous(std::exchange(host.m_answer, std::move(answer)))
        {}
        ~AnswerScope() { m_host.m_answer = std::move(m_previous); }
        AnswerScope(const AnswerScope &) = delete;
        AnswerScope &operator=(const AnswerScope &) = delete;

    private:
        EngineHost &m_host;
        std::shared_ptr<Answer> m_previous;
    };
    const std::shared_ptr<Answer> &currentAnswer() const { return m_answer; }

    explicit EngineHost(EngineConfig config, const Clock *clock = nullptr,
                        std::size_t ledgerCapacity = 50'000, QObject *parent = nullptr);
    ~EngineHost() override;

    LeaseEngine &engine() { return *m_engine; }
    // Where answers that are costly to encode are built off the engine thread (snapshots,
    // exports); they come back to the host's thread by a queued call. The host waits for them
    // when it is destroyed, so none comes back to a host that is gone.
    QThreadPool &workers() { return m_workers; }
    const ResourceParser &parser() const { return m_parser; }
    const Clock &clock() const { return *m_clock; }
    void setWorkspaceRoot(const std::string &root) { m_parser = ResourceParser(root); }

    // Runs `call` against the engine, then re-arms the alarm. Every mutation goes through here.
    template<class F> auto run(F &&call) -> decltype(call(std::declval<LeaseEngine &>()))
    {
        ++m_generation;
        using Result = decltype(call(*m_engine));
        if constexpr (std::is_void_v<Result>) {
            call(*m_engine);
            rearm();
        } else {
            auto result = call(*m_engine);
            if constexpr (std::is_same_v<Result, AcquireResult>) {
                if (const auto *grant = std::get_if<Grant>(&result); grant && m_answer)
                    m_answer->grants.push_back(*grant);
            }
            rearm();
            return result;
        }
    }

    // The engine's snapshot, shared: built once per change (or when the one kept is older than
    // `maxAgeMs`, so its relative times stay true), however many readers ask. /status, /metrics
    // and the MCP status resource read this, and encode it off the engine thread.
    std::shared_ptr<const Snapshot> sharedSnapshot(std::int64_t maxAgeMs = 250);

    // Completes whatever is due at the clock's time and re-arms the alarm. The alarm calls it;
    // tests that move a manual clock call it too.
    void tick();

    // The engine deadline the alarm is armed for, if armed. Never later than the engine's
    // earliest deadline; it may be earlier (the alarm then fires, finds nothing, re-arms).
    std::optional<TimeMs> alarmDeadline() const
    {
        return m_alarm.isActive() ? std::optional<TimeMs>(m_armedFor) : std::nullopt;
    }
    // Whether the zero timer is armed to hand the store what no one waits for (not while a turn
    // of Qt's own dispatcher is under way: its end does it).
    bool flushArmed() const { return m_flush.isActive(); }

    // Registers who hears the end of parked wait `waitId` (exactly once).
    void onWaitEnd(std::uint64_t waitId, WaitCallback callback);
    // Cancels parked wait `waitId`; its listener hears a `cancelled` refusal (it took nothing).
    void cancelWait(std::uint64_t waitId);
    // The client of a parked wait went away: cancel it. Any grant that finds no listener is
    // given back (see onWaitEnded), so nothing is leaked either way.
    void abandonWait(std::uint64_t waitId);

    // Attaches `store` (it must outlive the host) and continues from what it holds: the engine
    // is rebuilt with tokens after the stored end, agents and leases are restored, the ledger
    // sequence continues, and leases that fell due while the service was down expire now.
    // From then on every decision is submitted to the store. Returns the restored lease count.
    int restoreFrom(LeaseStore &store, const StoredState &state);
    LeaseStore *store() const { return m_store; }
    // Commits everything submitted, stops the store's writer, and answers whoever waited for
    // durability (shutdown).
    void closeStore();
    // Keeps `op` with the decisions of the current call (a key minted by an operator, say);
    // whenDurable() covers it like any decision. Without a store it is dropped.
    void keep(const StoreOp &op);
    // Calls `done(true)` once everything decided so far is durable (at once without a store).
    // The transport answers through this, so no client hears of a grant a crash could undo.
    // Calls `done(false)` instead, within the store timeout, when the store cannot make it
    // durable: at once while the store is degraded, else when the store falls ill or stays
    // silent past the timeout (it is then marked unresponsive until its next commit).
    void whenDurable(std::function<void(bool durable)> done);
    // Gives back `grants` (no trust effect): their caller has gone, or `storeLost`, they could
    // not be made durable (ledger reason store_unavailable).
    void giveBack(const std::vector<Grant> &grants, bool storeLost);

    // The store's health as the host acts on it: what the store reports, or unresponsive when a
    // change waited longer than the store timeout. Ok without a store.
    const StoreHealth &storeHealth() const { return m_health; }
    // How long a change may wait for durability before the store counts as unresponsive.
    void setStoreTimeoutMs(std::int64_t ms) { m_storeTimeoutMs = ms; }
    // Changes refused or given back because the store could not take them.
    std::uint64_t storeRefusedChanges() const { return m_storeRefused; }
    // Deadlocks refused, force releases and expiries over the last hour (the health check's).
    IncidentWindow::Counts incidentsLastHour() const
    {
        return m_incidents.counts(m_clock->nowMs());
    }

    // Events with seq > since matching `filter`, oldest first, at most `limit`. Reads the store
    // on this thread: for small reads only (tests, tools); pages and exports use readLedger().
    std::vector<LedgerEvent> ledger(std::uint64_t since, std::size_t limit,
                                    const LedgerFilter &filter = {}) const;
    // Calls `visit` for each event after `since`, oldest first, and returns true, when the ring
    // still holds every event after `since`; false (visiting nothing) when some are only in the
    // store, or were never recorded (`since` beyond the last event). The watch stream's resume.
    bool forEachRecent(std::uint64_t since, FunctionRef<void(const LedgerEvent &)> visit) const;
    // The same page, read without holding up the engine: the stored part comes from the store's
    // reader thread, the newest part from the ring here; `done` runs on this thread.
    void readLedger(std::uint64_t since, std::size_t limit, const LedgerFilter &filter,
                    std::function<void(std::vector<LedgerEvent>)> done);

signals:
    void eventRecorded(const leasehold::LedgerEvent &event);
    void storeHealthChanged(const leasehold::StoreHealth &health);

private:
    void onEvent(const LedgerEvent &event) override;
    void onWaitEnded(std::uint64_t waitId, const WaitOutcome &outcome) override;
    void rearm();
    void durable(std::uint64_t ticket);
    // The store's own report, or the host's verdict (`unresponsive`); acts on the change.
    void setStoreHealth(const StoreHealth &reported, bool unresponsive);
    // Appends to `page` the ring's events after its last one (or after `since`) that match
    // `filter`, up to `limit` in all: where a page read from the store continues.
    void continueFromRing(std::vector<LedgerEvent> &page, std::uint64_t since, std::size_t limit,
                          const LedgerFilter &filter) const;
    // Answers every change waiting for durability with `false`.
    void failDurableWaiters();
    // Hands the current call's operations to the store as one submission.
    void submitPending();
    // Submits now if many operations have gathered, else once the event loop is idle.
    void submitSoon();
    // Connects the turn's last slot (after the store's), so decisions wait for the turn's end.
    void followTurnEnd();

    IncidentWindow m_incidents;
    std::unique_ptr<Clock> m_ownClock;
    const Clock *m_clock;
    std::unique_ptr<LeaseEngine> m_engine;
    ResourceParser m_parser;
    QTimer m_alarm;
    QThreadPool m_workers;
    QTimer m_flush; // submits what the store has not been given yet, once the loop is idle
    // Under Qt's own dispatcher what a turn of the loop decided is submitted as the turn ends
    // (aboutToBlock). While that signal's later slots run (and when turns are not followed) a
    // decision is submitted at once if waited for, by the zero timer if not.
    QAbstractEventDispatcher *m_loop = nullptr;
    bool m_followingTurnEnd = false;
    bool m_turnEnded = true;
    TimeMs m_armedFor = 0; // the deadline the alarm is set for
    std::deque<LedgerEvent> m_ledger;
    std::size_t m_ledgerCapacity;
    struct WaitListener
    {
        WaitCallback callback;
        std::shared_ptr<Answer> answer; // the answer the wait was parked in
    };
    std::unordered_map<std::uint64_t, WaitListener> m_waits;
    std::shared_ptr<Answer> m_answer; // the answer being composed now, if any
    std::uint64_t m_generation = 0;   // bumped by every call that may change the engine
    std::uint64_t m_snapshotGeneration = 0;
    std::shared_ptr<const Snapshot> m_snapshot;
    EngineConfig m_config;
    LeaseStore *m_store = nullptr;
    StoreOps m_pendingOps;          // the engine's journal: what it decided, not yet submitted
    std::size_t m_submitBytes = 0;  // recent submissions' size, a high-water mark that decays
    std::uint64_t m_lastTicket = 0; // the last store ticket submitted
    std::uint64_t m_durable = 0;    // the highest ticket the store reported durable
    static constexpr std::uint64_t kNotSubmitted = UINT64_MAX; // a waiter's ticket until then
    struct DurableWaiter
    {
        std::uint64_t ticket;
        TimeMs deadline;
        std::function<void(bool)> done;
    };
    std::deque<DurableWaiter> m_durableWaiters;
    std::int64_t m_storeTimeoutMs = 5000;
    StoreHealth m_reported;      // what the store said last
    bool m_unresponsive = false; // a change waited past the timeout since the last commit
    StoreHealth m_health;        // what the host acts on
    std::uint64_t m_storeRefused = 0;
    // What the store's reader thread holds of this host while a read is out (cleared first in
    // the destructor).
    CrossThreadRef<EngineHost> m_self{this};
};

} // namespace leasehold
