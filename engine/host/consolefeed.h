#pragma once

#include "consoleframe.h"

#include <QElapsedTimer>
#include <QObject>
#include <QTimer>

#include <functional>

namespace leasehold {

class EngineHost;

// Publishes the engine's state to the console at most `maxRate` times a second, and only when
// something changed (or once a second, so counters and liveness stay current). Ledger events
// are collected as they are recorded and carried by the next frame; beyond `maxEvents` per frame
// the oldest are counted as skipped (the store still has them).
//
// The frame is built here, on the engine thread, and handed over as an immutable shared_ptr
// through a queued signal, so the console never reaches into the engine and a slow console
// never slows an agent.
//
// Thread: the engine thread.
class ConsoleFeed : public QObject
{
    Q_OBJECT

public:
    using FactsSource = std::function<ServiceFacts()>;

    ConsoleFeed(EngineHost &host, FactsSource facts, int maxRate = 10, std::size_t maxEvents = 5000,
                QObject *parent = nullptr);

    // Asks for a frame as soon as the rate allows (the console calls it once it is listening).
    void requestFrame();
    std::uint64_t published() const { return m_number; }

signals:
    void framePublished(leasehold::ConsoleFramePtr frame);

private:
    void onEvent(const LedgerEvent &event);
    // Drops all but the newest `count` collected events, counting them as skipped.
    void keepNewest(std::size_t count);
    void schedule();
    void publish();

    EngineHost &m_host;
    FactsSource m_facts;
    std::int64_t m_intervalMs;
    std::size_t m_maxEvents;
    std::vector<LedgerEvent> m_events;
    std::uint64_t m_skipped = 0;
    std::uint64_t m_number = 0;
    QTimer m_publish;   // single shot: the next frame
    QTimer m_heartbeat; // one frame a second even when nothing was recorded
    QElapsedTimer m_uptime;
    std::int64_t m_lastAtMs = -1'000'000; // the last publication, on m_uptime's clock
    std::int64_t m_dueAtMs = 0;           // when m_publish should fire, on m_uptime's clock
    std::int64_t m_lagMs = 0;             // how late it fired last time
};

} // namespace leasehold
