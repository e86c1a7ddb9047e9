#pragma once

#include "clock.h"
#include "via.h"

#include <QObject>
#include <QTimer>

#include <array>
#include <cstdint>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>

namespace leasehold {

class EngineHost;

// Which agents are live, and through what: an agent is live while it has a live MCP session or
// was seen on any surface (REST, guard, hook, git, MCP) within the live window. Strict mode in
// the workspace tools and the guard's question (POST /check) count live agents from here, so an
// agent that only ever speaks through a hook counts as much as one with an MCP session.
//
// Each change of an agent's set of surfaces is passed to the engine (its agents view). One timer
// is armed for the next moment a surface lapses. A call on a surface already live less than a
// second ago costs one hash lookup: lapses are exact to that second.
//
// Thread: the engine thread.
class AgentPresence : public QObject
{
    Q_OBJECT

public:
    AgentPresence(EngineHost &host, std::int64_t windowMs, QObject *parent = nullptr);
    ~AgentPresence() override;

    // `did` made a call through `via` now.
    void seen(const std::string &did, Via via);
    // `did` has `sessions` live sessions through `via` (MCP, or the guard's MCP session): live
    // on that surface while there is at least one (sessions lapse by their own window).
    void setSessions(const std::string &did, Via via, int sessions);

    int liveAgents() const { return m_live; }
    bool live(const std::string &did) const;
    ViaSet surfaces(const std::string &did) const;
    std::int64_t windowMs() const { return m_windowMs; }

    // Lapses what fell out of the window; the timer calls it, tests with a manual clock too.
    void sweep();

signals:
    void liveAgentsChanged(int liveAgents);

private:
    struct Agent
    {
        std::array<TimeMs, kViaCount> lastSeen{}; // 0: never
        std::array<int, kViaCount> sessions{};
        int toldSessions = 0; // the sum of `sessions` as last passed to the engine
        ViaSet via = 0;       // the surfaces live now
        TimeMs due = 0;       // when the next timed surface lapses (0: none)
    };
    ViaSet compute(const Agent &a, TimeMs now, TimeMs *due) const;
    // Recomputes `did`'s surfaces, tells the engine when they changed, reschedules its lapse.
    void update(const std::string &did, Agent &a);
    void rearm();

    EngineHost &m_host;
    std::int64_t m_windowMs;
    std::unordered_map<std::string, Agent> m_agents;
    std::set<std::pair<TimeMs, std::string>> m_due; // (lapse time, agent), earliest first
    int m_live = 0;
    QTimer m_alarm;
    TimeMs m_armedFor = 0;
};

} // namespace leasehold
