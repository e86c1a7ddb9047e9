// EngineHost: the engine on its thread — the store it writes through (a turn's decisions as one
// submission), waits and their callbacks, the alarm, restore, durability and store health.
// Ledger reads are in enginehost_ledger.cpp.

#include "enginehost.h"

#include <QAbstractEventDispatcher>

#include <algorithm>

#include "logging.h"

namespace leasehold {

EngineHost::EngineHost(EngineConfig config, const Clock *clock, std::size_t ledgerCapacity,
                       QObject *parent)
    : QObject(parent)
    , m_ledgerCapacity(ledgerCapacity)
{
    if (!clock) {
        m_ownClock = std::make_unique<SystemClock>();
        clock = m_ownClock.get();
    }
    m_clock = clock;
    m_config = config;
    m_engine = std::make_unique<LeaseEngine>(*m_clock, std::move(config));
    m_engine->setListener(this);
    m_alarm.setSingleShot(true);
    m_alarm.setTimerType(Qt::PreciseTimer);
    m_flush.setSingleShot(true);
    m_flush.setInterval(0);
    connect(&m_flush, &QTimer::timeout, this, &EngineHost::submitPending);
    // Qt's own dispatcher (headless) signals aboutToBlock() before each wait for events. What
    // the loop's turn decided goes to the store then: one submission, one ticket for every
    // answer that waits for it, and no timer armed per change (a zero timer is registered and
    // unregistered each time: about 1 100 instructions per request). This slot comes before
    // the store's (which then learns the loop is idle and answers what became durable); what
    // those answers decide goes the old way until the signal's last slot (followTurnEnd).
    // GLib's dispatcher signals once per processEvents() call, which may sleep many times over,
    // so under it each waited-for change is submitted at once and the rest by the zero timer.
    if (QAbstractEventDispatcher *loop = QAbstractEventDispatcher::instance(thread());
        loop && loop->inherits("QEventDispatcherUNIX")) {
        m_loop = loop;
        connect(loop, &QAbstractEventDispatcher::aboutToBlock, this, [this] {
            submitPending();
            m_turnEnded = true;
        });
    }
    connect(&m_alarm, &QTimer::timeout, this, &EngineHost::tick);
}

EngineHost::~EngineHost()
{
    m_self.clear(); // a page the store reads from here on is dropped, not brought here
    // A worker's answer is a queued call to this host: let every one finish, then the posted
    // calls die with this object instead of reaching it after it has gone.
    m_workers.waitForDone();
    m_engine->setListener(nullptr);
    m_engine->setJournal(nullptr);
}

void EngineHost::submitPending()
{
    if (!m_store || m_pendingOps.empty())
        return;
    m_flush.stop();
    const std::size_t bytes = m_pendingOps.bytes();
    m_lastTicket = m_store->submit(m_pendingOps);
    // The answers waiting for this submission (the newest waiters) learn its ticket; a store
    // that committed it already, inside submit(), has them answered at once.
    for (auto w = m_durableWaiters.rbegin();
         w != m_durableWaiters.rend() && w->ticket == kNotSubmitted; ++w)
        w->ticket = m_lastTicket;
    if (!m_durableWaiters.empty() && m_durableWaiters.front().ticket <= m_durable)
        durable(m_durable);
    // Room for the next submission, made once: a buffer that outgrows its room copies all it
    // holds. Sizes vary from call to call (a flush when idle, a cut at 1024 operations), so the
    // room follows the larger recent ones, with a quarter to spare, and shrinks slowly after a
    // rare large one (a release of everything).
    m_submitBytes = std::max(bytes, m_submitBytes - m_submitBytes / 8);
    m_pendingOps.reserve(m_submitBytes + m_submitBytes / 4);
}

void EngineHost::keep(const StoreOp &op)
{
    if (!m_store)
        return;
    m_pendingOps.add(op);
    submitSoon();
}

void EngineHost::submitSoon()
{
    // Decisions travel to the store in large chunks: when many have gathered, else as the
    // loop's turn ends. Where turns are not followed (or one has just ended), a decision someone
    // waits for goes at once (whenDurable) and the rest by the zero timer.
    if (m_pendingOps.size() >= 1024)
        submitPending();
    else if (m_turnEnded && !m_pendingOps.empty() && !m_flush.isActive())
        m_flush.start();
}

void EngineHost::rearm()
{
    submitSoon();
    std::optional<TimeMs> next = m_engine->nextDeadline();
    // Deadlines grow with time, so the oldest change waiting for durability is due first.
    if (!m_durableWaiters.empty())
        next = std::min(next.value_or(m_durableWaiters.front().deadline),
                        m_durableWaiters.front().deadline);
    if (!next) {
        m_alarm.stop();
        return;
    }
    // Most calls leave the earliest deadline where it was or move it later (a lease released,
    // one granted for longer); re-arming a timer costs more than the engine call itself, so the
    // alarm only ever moves earlier. One that fires early finds nothing due and re-arms for the
    // true deadline: at most one spare wake-up per deadline, never a late one.
    if (m_alarm.isActive() && m_armedFor <= *next)
        return;
    m_armedFor = *next;
    const TimeMs delay = std::max<TimeMs>(0, *next - m_clock->nowMs());
    m_alarm.start(static_cast<int>(std::min<TimeMs>(delay, 24LL * 3600 * 1000)));
}

std::shared_ptr<const Snapshot> EngineHost::sharedSnapshot(std::int64_t maxAgeMs)
{
    if (!m_snapshot || m_snapshotGeneration != m_generation ||
        m_clock->nowMs() - m_snapshot->at >= maxAgeMs) {
        m_snapshot = std::make_shared<const Snapshot>(m_engine->snapshot());
        m_snapshotGeneration = m_generation;
    }
    return m_snapshot;
}

void EngineHost::tick()
{
    ++m_generation;
    m_engine->expireDue();
    if (!m_durableWaiters.empty() && m_durableWaiters.front().deadline <= m_clock->nowMs())
        setStoreHealth(m_reported, true);
    rearm();
}

void EngineHost::onWaitEnd(std::uint64_t waitId, WaitCallback callback)
{
    m_waits[waitId] = {std::move(callback), m_answer};
}

void EngineHost::cancelWait(std::uint64_t waitId)
{
    run([waitId](LeaseEngine &e) { e.cancelWait(waitId); });
}

void EngineHost::abandonWait(std::uint64_t waitId)
{
    if (m_waits.erase(waitId) == 0)
        return;
    run([waitId](LeaseEngine &e) { e.cancelWait(waitId); });
}

void EngineHost::onWaitEnded(std::uint64_t waitId, const WaitOutcome &outcome)
{
    ++m_generation;
    auto it = m_waits.find(waitId);
    if (it == m_waits.end()) {
        if (const auto *grant = std::get_if<Grant>(&outcome))
            m_engine->abandon(*grant); // nobody is listening: never leak a lease
        return;
    }
    WaitListener listener = std::move(it->second);
    m_waits.erase(it);
    if (const auto *grant = std::get_if<Grant>(&outcome); grant && listener.answer)
        listener.answer->grants.push_back(*grant);
    AnswerScope scope(*this, std::move(listener.answer));
    listener.callback(outcome);
}

void EngineHost::onEvent(const LedgerEvent &event)
{
    m_ledger.push_back(event);
    m_incidents.note(event);
    if (m_ledger.size() > m_ledgerCapacity)
        m_ledger.pop_front();
    emit eventRecorded(event);
}

int EngineHost::restoreFrom(LeaseStore &store, const StoredState &state)
{
    m_store = &store;
    store.setDurableCallback([this](std::uint64_t ticket) { durable(ticket); });
    followTurnEnd();
    store.setHealthCallback(
        [this](const StoreHealth &health) { setStoreHealth(health, m_unresponsive); });
    std::uint64_t first = state.tokenEnd;
    for (const LeaseInfo &l : state.leases)
        first = std::max(first, l.token + 1);
    m_engine->setListener(nullptr);
    m_engine = std::make_unique<LeaseEngine>(*m_clock, m_config, std::make_unique<IdGenerator>(),
                                             TokenAllocator(first, 4096, [this](std::uint64_t end) {
                                                 // Before the grant that needed it.
                                                 m_pendingOps.reserveTokens(end);
                                             }));
    m_engine->setListener(this);
    m_engine->restoreSequence(state.lastSeq);
    for (const AgentState &a : state.agents)
        m_engine->restoreAgent(a);
    int restored = 0;
    for (const LeaseInfo &l : state.leases) {
        ParsedName name = m_parser.parse(l.resource);
        if (!std::holds_alternative<ResourceName>(name) ||
            !m_engine->restoreLease(l, std::get<ResourceName>(name))) {
            qCWarning(lcService) << "stored lease" << l.leaseId.c_str() << "on"
                                 << l.resource.c_str() << "could not be restored; dropped";
            m_pendingOps.dropLease(l.leaseId);
            continue;
        }
        ++restored;
    }
    // From here on the engine writes down each durable change as it makes it.
    m_engine->setJournal(&m_pendingOps);
    // The token range this run starts in is reserved before any token of it is issued.
    m_pendingOps.reserveTokens(first);
    submitPending();
    tick(); // what fell due while down expires now, with the usual trust and ledger effects
    return restored;
}

void EngineHost::followTurnEnd()
{
    // The last slot of aboutToBlock(), after the store's: from here until the next turn's end
    // the engine's decisions wait for it (as the constructor's slot ends each turn).
    if (m_loop && !m_followingTurnEnd)
        connect(m_loop, &QAbstractEventDispatcher::aboutToBlock, this,
                [this] { m_turnEnded = false; });
    m_followingTurnEnd = m_loop != nullptr;
    m_turnEnded = !m_followingTurnEnd;
}

void EngineHost::closeStore()
{
    if (!m_store)
        return;
    submitPending();
    m_store->close();
    durable(m_store->stats().durable);
    failDurableWaiters(); // what the disk never took is answered, not left hanging
}

void EngineHost::whenDurable(std::function<void(bool durable)> done)
{
    if (m_turnEnded || !m_health.ok())
        submitPending();
    if (!m_store || (m_pendingOps.empty() && m_durable >= m_lastTicket))
        return done(true);
    if (!m_health.ok())
        return done(false);
    // Decisions not yet submitted go when the loop's turn ends, with the rest of the turn's.
    const std::uint64_t ticket = m_pendingOps.empty() ? m_lastTicket : kNotSubmitted;
    m_durableWaiters.push_back({ticket, m_clock->nowMs() + m_storeTimeoutMs, std::move(done)});
    if (m_durableWaiters.size() == 1)
        rearm();
}

void EngineHost::durable(std::uint64_t ticket)
{
    m_durable = std::max(m_durable, ticket);
    while (!m_durableWaiters.empty() && m_durableWaiters.front().ticket <= m_durable) {
        auto done = std::move(m_durableWaiters.front().done);
        m_durableWaiters.pop_front();
        done(true);
    }
    if (m_unresponsive)
        setStoreHealth(m_reported, false); // the disk answered after all
}

void EngineHost::failDurableWaiters()
{
    // Answered oldest first; an answer may give grants back, which queues more work, not more
    // waiters (the store is not ok, so whenDurable answers at once).
    std::deque<DurableWaiter> waiters = std::exchange(m_durableWaiters, {});
    for (DurableWaiter &w : waiters)
        w.done(false);
}

void EngineHost::setStoreHealth(const StoreHealth &reported, bool unresponsive)
{
    m_reported = reported;
    m_unresponsive = unresponsive;
    StoreHealth health = reported;
    if (health.ok() && unresponsive)
        health = {StoreHealth::Problem::Unresponsive,
                  "no commit confirmed for " + std::to_string(m_storeTimeoutMs) + " ms"};
    if (health == m_health)
        return;
    const bool wasOk = m_health.ok();
    m_health = health;
    if (wasOk && !health.ok())
        qCInfo(lcService) << "store unavailable:" << health.phrase()
                          << "- new grants are refused until it recovers";
    else if (!wasOk && health.ok())
        qCInfo(lcService) << "store healthy again: granting";
    run([&](LeaseEngine &e) { e.setStoreAvailable(health.ok(), health.phrase()); });
    if (!health.ok())
        failDurableWaiters();
    emit storeHealthChanged(m_health);
}

void EngineHost::giveBack(const std::vector<Grant> &grants, bool storeLost)
{
    if (grants.empty())
        return;
    if (storeLost)
        m_storeRefused += grants.size();
    run([&](LeaseEngine &e) {
        for (const Grant &g : grants)
            e.abandon(g, storeLost);
    });
}

} // namespace leasehold
