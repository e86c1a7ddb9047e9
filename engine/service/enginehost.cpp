#include "enginehost.h"

#include <algorithm>

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
    m_engine = std::make_unique<LeaseEngine>(*m_clock, std::move(config));
    m_engine->setListener(this);
    m_alarm.setSingleShot(true);
    m_alarm.setTimerType(Qt::PreciseTimer);
    connect(&m_alarm, &QTimer::timeout, this, &EngineHost::tick);
}

EngineHost::~EngineHost()
{
    m_engine->setListener(nullptr);
}

void EngineHost::rearm()
{
    const std::optional<TimeMs> next = m_engine->nextDeadline();
    if (!next) {
        m_alarm.stop();
        return;
    }
    // Most calls leave the earliest deadline where it was; re-arming a timer costs more than
    // the engine call itself, so only move it when the deadline moved.
    if (m_alarm.isActive() && *next == m_armedFor)
        return;
    m_armedFor = *next;
    const TimeMs delay = std::max<TimeMs>(0, *next - m_clock->nowMs());
    m_alarm.start(static_cast<int>(std::min<TimeMs>(delay, 24LL * 3600 * 1000)));
}

void EngineHost::tick()
{
    m_engine->expireDue();
    rearm();
}

void EngineHost::onWaitEnd(std::uint64_t waitId, WaitCallback callback)
{
    m_waits[waitId] = std::move(callback);
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
    auto it = m_waits.find(waitId);
    if (it == m_waits.end()) {
        if (const auto *grant = std::get_if<Grant>(&outcome))
            m_engine->abandon(*grant); // nobody is listening: never leak a lease
        return;
    }
    WaitCallback callback = std::move(it->second);
    m_waits.erase(it);
    callback(outcome);
}

void EngineHost::onEvent(const LedgerEvent &event)
{
    m_ledger.push_back(event);
    if (m_ledger.size() > m_ledgerCapacity)
        m_ledger.pop_front();
    emit eventRecorded(event);
}

std::vector<LedgerEvent> EngineHost::ledger(std::uint64_t since, std::size_t limit,
                                            const std::string &actor) const
{
    std::vector<LedgerEvent> out;
    auto it = std::upper_bound(m_ledger.begin(), m_ledger.end(), since,
                               [](std::uint64_t s, const LedgerEvent &e) { return s < e.seq; });
    for (; it != m_ledger.end() && out.size() < limit; ++it) {
        if (actor.empty() || it->actorDid == actor)
            out.push_back(*it);
    }
    return out;
}

} // namespace leasehold
