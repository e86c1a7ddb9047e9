#pragma once

#include "agentbook.h"
#include "clock.h"
#include "deadlinequeue.h"
#include "engineconfig.h"
#include "enginelistener.h"
#include "exclusivepatterns.h"
#include "functionref.h"
#include "idgenerator.h"
#include "leasetypes.h"
#include "releaserequests.h"
#include "resourcetrie.h"
#include "snapshot.h"
#include "storeops.h"
#include "tokenallocator.h"
#include "waitgraph.h"

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace leasehold {

class Outbox;

// The lease engine: who holds what, who waits for what, and every decision about it.
//
// A request names an agent, resources and a mode. A set that conflicts with nobody is granted
// whole (never part of it); a held set is refused naming the holder with a back-off, or parked
// in a bounded FIFO wait; a wait that would close a cycle is refused as a deadlock. Leases end
// by release, by the engine's own alarm at expiresAt, or by an operator. Pins hold an ending
// lease in place until the mutation they cover has landed.
//
// Threading: one thread owns the engine (no locks inside). Time comes only from the injected
// Clock; the host arms one timer for nextDeadline() and calls expireDue() when it fires.
// Results are returned by value; asynchronous outcomes (a parked wait ending) and ledger events
// reach the EngineListener after the call that caused them has returned.
//
// Implementation: leaseengine.cpp (acquire, release, renew, lease ends), leaseengine_waits.cpp
// (parked waits, wake-ups, pins, deadlines), leaseengine_admin.cpp (levers, queries, invariants),
// leaseengine_releaserequests.cpp (asking a holder to let go).
//
// Invariants (checkInvariants()): no two agents hold conflicting leases; no parked waiter could
// be granted; every live lease, pin, want and wait has exactly one deadline in the queue;
// tokens strictly increase; every open release request names a live lease of its holder and
// is timed until it is overdue.
class LeaseEngine
{
public:
    LeaseEngine(const Clock &clock, EngineConfig config = {},
                std::unique_ptr<IdGenerator> ids = std::make_unique<IdGenerator>(),
                TokenAllocator tokens = TokenAllocator());
    ~LeaseEngine();
    LeaseEngine(const LeaseEngine &) = delete;
    LeaseEngine &operator=(const LeaseEngine &) = delete;

    // Requires: `listener` outlives the engine or is reset to nullptr first.
    void setListener(EngineListener *listener) { m_listener = listener; }
    // Where the engine writes down each change to its durable state as it makes it: a lease
    // granted, extended or ended, an agent's trust, counts or suspension, and every ledger
    // event, in decision order. The host hands what gathered to its store. Written at the
    // moment of change, from the records themselves, so nothing is looked up again later.
    // Requires: `journal` outlives the engine or is reset to nullptr first.
    void setJournal(StoreOps *journal) { m_journal = journal; }
    const EngineConfig &config() const { return m_config; }

    // Requires: request.resources non-empty, request.actor non-empty.
    AcquireResult acquire(const AcquireRequest &request);
    // Releases `resources` (all the agent holds when empty); `leaseId`, when not empty, must be
    // the current lease on each named resource.
    ReleaseResult release(const std::string &actor, const std::vector<ResourceName> &resources,
                          const std::string &leaseId = {});
    // Extends a held lease by `ttlMs` from now, or by its own TTL when none is given.
    LeaseResult renew(const std::string &actor, const ResourceName &resource,
                      const std::string &leaseId, std::optional<std::int64_t> ttlMs = {});
    PinResult pin(const std::string &actor, const std::string &leaseId);
    PinResult unpin(const std::string &actor, const std::string &pinId);

    // Ends a parked wait that nobody waits for any more; it takes nothing.
    void cancelWait(std::uint64_t waitId);
    // Gives back leases granted to a caller that had gone (no trust effect), or that the store
    // could not make durable in time (`storeLost`: ledger reason store_unavailable). Leases the
    // grant only extended are left alone.
    void abandon(const Grant &grant, bool storeLost = false);

    // The host's word on its store. While unavailable, new requests are refused
    // (store_unavailable, naming `problem`) and parked waits stay parked without being granted;
    // releases, renewals and levers go on. When it is available again, waits are granted as
    // usual.
    void setStoreAvailable(bool available, const std::string &problem = {});
    bool storeAvailable() const { return m_storeAvailable; }

    // Operator levers; each is recorded with the operator's identity and moves no trust.
    // `reason` goes into the admin event ("sweep" for sweep()); empty for an operator's lever.
    int releaseHolder(const std::string &op, const std::string &did,
                      const std::string &reason = {});
    // The stale-holder sweep (leaseengine_sweep.cpp): the agents holding leases that are live on
    // no surface and were not seen for `notSeenForMs` (since the restore, for one not seen since
    // then), oldest first; unless `dryRun`, each one's leases are released as an operator's
    // release-holder with reason "sweep".
    std::vector<SweepFinding> sweep(const std::string &op, std::int64_t notSeenForMs, bool dryRun);
    int releaseAll(const std::string &op);
    bool releaseLease(const std::string &op, const std::string &leaseId);
    void suspend(const std::string &op, const std::string &did, bool suspended);
    void pause(const std::string &op, bool paused);

    // Release requests (leaseengine_releaserequests.cpp): `ask.requester` asks the holder of a
    // lease to let it go. An agent may ask only about a resource it is parked on or was refused
    // recently (NoBusiness otherwise); an operator about any lease. Asking again about the same
    // lease returns the open request (`existing`). Never changes who holds what.
    // Requires: ask.resource or ask.leaseId set.
    RequestResult raiseReleaseRequest(const ReleaseRequestAsk &ask);
    // The holder says no: the request ends (ledger: declined).
    RequestResult declineReleaseRequest(const std::string &holder, const std::string &requestId,
                                        const std::string &reason);
    // The open requests against `holder`'s leases, oldest first; one hash probe, none when no
    // request is open anywhere.
    std::vector<ReleaseRequestInfo> releaseRequestsFor(const std::string &holder) const;
    bool hasReleaseRequests() const { return !m_requests.empty(); }
    // Every open request, oldest first.
    std::vector<ReleaseRequestInfo> releaseRequests() const;

    // The earliest deadline of anything (lease, pin, want, wait, request), or nothing.
    std::optional<TimeMs> nextDeadline() const;
    // Completes everything due at the clock's current time.
    void expireDue();

    // Restoring what a previous run persisted, before any request is served. A restored lease
    // keeps its id, token, holder and deadline; one whose deadline passed while the service was
    // down expires at the next expireDue() with the usual trust effect, marked `while_down`.
    // Returns false (and restores nothing) for a lease that conflicts with one restored before.
    bool restoreLease(const LeaseInfo &lease, const ResourceName &name);
    void restoreAgent(const AgentState &agent);
    // Ledger sequence numbers continue after `lastSeq`.
    void restoreSequence(std::uint64_t lastSeq);
    // An agent's persistent part (trust, counts, suspension).
    std::optional<AgentState> agentState(const std::string &did) const;

    // Records that a change made outside the engine's own calls — `op`, a guarded tool's name,
    // a commit — was refused by `refusal` (a guard's POST /check): counted and in the ledger
    // like any refusal, so operators see the agents the guards stopped.
    // `via`, `pid` and `command`, when given, say which guard asked and, for the filesystem
    // gate, which process tried.
    struct GuardAsk
    {
        std::string op;
        std::string via;
        std::int64_t pid = -1;
        std::string command;
    };
    void recordGuardRefusal(const std::string &actor, const Refusal &refusal, const GuardAsk &ask);

    // Liveness as the host sees it: the agent's live MCP sessions and every surface it was
    // seen on within the live window (a set of Via). Feeds the agents view.
    void setPresence(const std::string &did, int liveSessions, ViaSet via);

    Snapshot snapshot() const;
    // The sequence number of the last event recorded (0 before the first).
    std::uint64_t lastSeq() const { return m_seq; }
    // Cost follows what the agent holds and waits for, not the size of the engine.
    AgentView agentView(const std::string &did) const;
    // A lease of another agent that conflicts with `did` using `name` in `mode` (cost follows
    // the depth of the name), or nothing.
    std::optional<LeaseInfo> blockingLease(const std::string &did, const ResourceName &name,
                                           Mode mode) const;
    // The lease_held refusal a change of `name` in `mode` by `did` would meet now (the holder,
    // its lease, how long it has held it, when it expires), or nothing: what the guarded
    // workspace tools and a guard's POST /check answer before a change.
    std::optional<Refusal> changeRefusal(const std::string &did, const ResourceName &name,
                                         Mode mode) const;
    // A write or delete lease of `did` on `name` or an ancestor of it, that is not ending.
    std::optional<LeaseInfo> coveringLease(const std::string &did, const ResourceName &name) const;
    // Records a change made under the engine's protection (a guarded workspace write).
    // `tool` names the change; `before` and `after` are the target's revisions ("" absent),
    // `to` a move's destination.
    void recordMutation(const std::string &did, const ResourceName &name,
                        const std::string &leaseId, std::string tool, std::string before,
                        std::string after, std::string to = {});
    WaitView waitView(const ResourceName *filter = nullptr) const;
    // Parked wait `waitId` as the wait view shows it, on the first of its resources someone
    // holds (else its first); nothing when it is not parked. Costs its own resources only.
    std::optional<WaiterInfo> parkedWait(std::uint64_t waitId) const;
    std::optional<LeaseInfo> lease(const std::string &leaseId) const;
    const Counters &counters() const { return m_counters; }
    std::size_t leaseCount() const { return m_leases.size(); }
    std::size_t parkedCount() const { return m_waiters.size(); }
    bool paused() const { return m_paused; }
    std::uint64_t nextToken() const { return m_tokens.peek(); }

    // Throws std::logic_error naming the first broken invariant.
    void checkInvariants() const;

private:
    struct Request;
    struct Contention;

    std::optional<Contention> findContention(const Request &req, std::uint64_t beforeTicket) const;
    // Grants `req`; `waitedMs`: how long it waited parked (-1: it did not), for the ledger.
    Grant commit(const Request &req, std::int64_t waitedMs = -1);
    Refusal contentionRefusal(const Contention &c, TimeMs now) const;
    // lease_held with the stampede back-off; records the requester's want.
    Refusal heldRefusal(const Request &req, const Contention &c, TimeMs now);
    Refusal simpleRefusal(RefusalReason reason, const std::string &resource) const;
    // deadlock: the cycle's steps, and what its first holder holds on the contended name.
    Refusal deadlockRefusal(const Request &req, const WaitCycle &cycle, TimeMs now) const;
    void recordWant(AgentRecord *agent, const ResourceName &name, Mode mode, bool exclusive,
                    std::int64_t backoffMs);
    void dropWant(WantRecord *want);
    void dropWants(AgentRecord *agent);
    Parked park(const Request &req, std::int64_t waitMs);
    void unpark(Waiter *w);
    void endWait(Waiter *w, WaitOutcome outcome);
    Request requestOf(const Waiter &w) const;
    void refuseParked(Waiter *w, RefusalReason reason);
    void wake(std::vector<ResourceName> freed);

    // Ends `lease` now, or marks it pending while pinned. Returns its final description.
    LeaseInfo endLease(LeaseRecord *lease, EndCause cause, const std::string &op = {});
    void finishLease(LeaseRecord *lease);
    // Lock-delay (leaseengine_lockdelay.cpp): the delay a lease granted to `req` on `name`
    // carries; keeping an ended lease's record in the trie, alone, for that long; and freeing
    // its name when the time is up.
    // `asked` < 0: the configured default for the name's kind. A restored lease takes that.
    std::int64_t lockDelayFor(std::int64_t asked, const ResourceName &name) const;
    void holdBack(LeaseRecord *lease);
    void endHoldBack(LeaseRecord *lease);
    void dropPin(PinRecord *pin, const char *reason);
    // Release requests: whether `agent` waits for (or was refused) something overlapping
    // `name`; a deadline passing; a lease's end answering its requests; their ledger events;
    // their invariants (adding the timed ones to `timed`).
    bool hasBusiness(const AgentRecord *agent, const ResourceName &name) const;
    void requestOverdue(ReleaseRequestRecord *request);
    void answerRequests(const LeaseRecord *lease);
    void recordRequestEvent(EventKind kind, const std::string &actor,
                            const ReleaseRequestRecord &request, std::uint64_t token,
                            std::string reason);
    void checkReleaseRequests(std::size_t &timed) const;
    LeaseRecord *ownLease(const AgentRecord *agent, const ResourceName &name) const;
    LeaseInfo describe(const LeaseRecord &lease) const;
    void journalAgent(const AgentRecord &agent);
    // Journals the lease a grant, extension or renewal left and records its ledger event.
    void recordGrant(const std::string &actor, const LeaseInfo &info, std::string reason,
                     std::int64_t waitedMs = -1);
    // Who holds something conflicting with `name` now, other than `self` (empty: nobody).
    std::string holderOf(const ResourceName &name, bool exclusive, const AgentRecord *self) const;
    std::int64_t clampTtl(std::optional<std::int64_t> ttlMs) const;

    // Records one ledger event; `facts` fills in its kind's facts, and runs only when someone
    // reads the ledger (a listener or a journal).
    void recordEvent(EventKind kind, const std::string &actor, const std::string &resource,
                     const std::string &leaseId, std::uint64_t token, std::string reason,
                     FunctionRef<void(EventFacts &)> facts, std::int64_t ttlMs = 0);
    void recordEvent(EventKind kind, const std::string &actor, const std::string &resource,
                     const std::string &leaseId, std::uint64_t token, std::string reason);
    // The refusal of `op` ("acquire", "release", ...), with what it names.
    void recordRefusal(const std::string &actor, const Refusal &r, const char *op,
                       Mode mode = Mode::Write);
    // Wakes waiters for everything freed during the call, then delivers listener calls.
    void settle();
    void countRefusal(const Refusal &r);

    const Clock &m_clock;
    EngineConfig m_config;
    ExclusivePatterns m_exclusive;
    std::unique_ptr<IdGenerator> m_ids;
    TokenAllocator m_tokens;
    EngineListener *m_listener = nullptr;
    StoreOps *m_journal = nullptr;
    std::unique_ptr<Outbox> m_outbox;

    ResourceTrie m_trie;
    DeadlineQueue m_deadlines;
    AgentBook m_agents;
    WaitGraph m_graph;
    std::unordered_map<std::string_view, std::unique_ptr<LeaseRecord>>
        m_leases; // key views leaseId
    std::unordered_map<std::string, std::unique_ptr<PinRecord>> m_pins;
    // Ended leases whose names are held back (lock-delay): in the trie, in no holder's list.
    std::unordered_map<const LeaseRecord *, std::unique_ptr<LeaseRecord>> m_heldBack;
    std::unordered_map<std::uint64_t, std::unique_ptr<Waiter>> m_waiters;
    std::unordered_map<WantRecord *, std::unique_ptr<WantRecord>> m_wants;
    ReleaseRequests m_requests;
    std::vector<ResourceName> m_freed; // names freed during the current call; woken at its end
    std::uint64_t m_nextWaitId = 1;
    std::uint64_t m_nextTicket = 1;
    std::uint64_t m_lastToken = 0;
    std::uint64_t m_seq = 0;
    bool m_paused = false;
    bool m_storeAvailable = true;
    std::string m_storeProblem;
    Counters m_counters;
    TimeMs m_restoredAt = 0; // leases due before this expired while the service was down
};

} // namespace leasehold
