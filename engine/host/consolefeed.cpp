#include "consolefeed.h"

#include "enginehost.h"

namespace leasehold {

ConsoleFeed::ConsoleFeed(EngineHost &host, FactsSource facts, int maxRate, std::size_t maxEvents,
                         QObject *parent)
    : QObject(parent)
    , m_host(host)
    , m_facts(std::move(facts))
    , m_intervalMs(1000 / std::max(1, maxRate))
    , m_maxEvents(maxEvents)
{
    qRegisterMetaType<ConsoleFramePtr>();
    m_uptime.start();
    m_publish.setSingleShot(true);
    m_publish.setTimerType(Qt::PreciseTimer);
    connect(&m_publish, &QTimer::timeout, this, &ConsoleFeed::publish);
    m_heartbeat.setInterval(1000);
    connect(&m_heartbeat, &QTimer::timeout, this, &ConsoleFeed::schedule);
    m_heartbeat.start();
    connect(&host, &EngineHost::eventRecorded, this, &ConsoleFeed::onEvent);
}

void ConsoleFeed::requestFrame()
{
    schedule();
}

void ConsoleFeed::onEvent(const LedgerEvent &event)
{
    // A burst larger than a frame can carry keeps its newest events; dropping from the front
    // in bulk (not one by one) keeps this O(1) per event.
    if (m_events.size() >= 2 * m_maxEvents)
        keepNewest(m_maxEvents);
    m_events.push_back(event);
    schedule();
}

void ConsoleFeed::keepNewest(std::size_t count)
{
    if (m_events.size() <= count)
        return;
    const std::size_t drop = m_events.size() - count;
    m_events.erase(m_events.begin(), m_events.begin() + std::ptrdiff_t(drop));
    m_skipped += drop;
}

void ConsoleFeed::schedule()
{
    if (m_publish.isActive())
        return; // a frame is already coming; it will carry this change too
    const std::int64_t now = m_uptime.elapsed();
    m_dueAtMs = std::max(now, m_lastAtMs + m_intervalMs);
    m_publish.start(int(m_dueAtMs - now));
}

void ConsoleFeed::publish()
{
    const std::int64_t now = m_uptime.elapsed();
    m_lagMs = std::max<std::int64_t>(0, now - m_dueAtMs);
    m_lastAtMs = now;

    auto frame = std::make_shared<ConsoleFrame>();
    frame->number = ++m_number;
    frame->snapshot = m_host.engine().snapshot();
    keepNewest(m_maxEvents);
    frame->events.swap(m_events);
    frame->eventsSkipped = std::exchange(m_skipped, 0);
    if (m_facts)
        frame->facts = m_facts();
    frame->facts.engineLoopLagMs = m_lagMs;
    emit framePublished(std::move(frame));
}

} // namespace leasehold
