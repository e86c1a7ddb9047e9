#include "agentpresence.h"

#include "enginehost.h"

#include <algorithm>
#include <numeric>

namespace leasehold {

namespace {

constexpr TimeMs kGranularityMs = 1000; // a surface seen this recently is not re-stamped

int indexOf(Via via)
{
    int i = 0;
    for (auto bits = unsigned(via); bits > 1; bits >>= 1)
        ++i;
    return i;
}

} // namespace

AgentPresence::AgentPresence(EngineHost &host, std::int64_t windowMs, QObject *parent)
    : QObject(parent)
    , m_host(host)
    , m_windowMs(windowMs)
{
    m_alarm.setSingleShot(true);
    m_alarm.setTimerType(Qt::CoarseTimer);
    connect(&m_alarm, &QTimer::timeout, this, &AgentPresence::sweep);
}

AgentPresence::~AgentPresence() = default;

void AgentPresence::seen(const std::string &did, Via via)
{
    if (did.empty())
        return;
    const TimeMs now = m_host.clock().nowMs();
    const int i = indexOf(via);
    auto it = m_agents.find(did);
    if (it != m_agents.end() && (it->second.via & ViaSet(via)) &&
        now - it->second.lastSeen[std::size_t(i)] < kGranularityMs)
        return; // the common case: a busy agent, live on this surface a moment ago
    Agent &a = it != m_agents.end() ? it->second : m_agents[did];
    a.lastSeen[std::size_t(i)] = now;
    update(did, a);
}

void AgentPresence::setSessions(const std::string &did, Via via, int sessions)
{
    if (did.empty())
        return;
    Agent &a = m_agents[did];
    a.sessions[std::size_t(indexOf(via))] = std::max(0, sessions);
    // No stamp: a session lapses by its own window (McpSessions), and one its client ended says
    // the agent left.
    update(did, a);
}

bool AgentPresence::live(const std::string &did) const
{
    return surfaces(did) != 0;
}

ViaSet AgentPresence::surfaces(const std::string &did) const
{
    auto it = m_agents.find(did);
    return it == m_agents.end() ? 0 : it->second.via;
}

ViaSet AgentPresence::compute(const Agent &a, TimeMs now, TimeMs *due) const
{
    ViaSet via = 0;
    *due = 0;
    for (std::size_t i = 0; i < std::size_t(kViaCount); ++i) {
        if (a.sessions[i] > 0) {
            via |= ViaSet(1u << i);
            continue;
        }
        if (a.lastSeen[i] == 0)
            continue;
        const TimeMs lapse = a.lastSeen[i] + m_windowMs;
        if (lapse <= now)
            continue;
        via |= ViaSet(1u << i);
        *due = *due == 0 ? lapse : std::min(*due, lapse);
    }
    return via;
}

void AgentPresence::update(const std::string &did, Agent &a)
{
    const TimeMs now = m_host.clock().nowMs();
    TimeMs due = 0;
    const ViaSet via = compute(a, now, &due);
    if (due != a.due) {
        if (a.due != 0)
            m_due.erase({a.due, did});
        if (due != 0)
            m_due.insert({due, did});
        a.due = due;
    }
    const int sessions = std::accumulate(a.sessions.begin(), a.sessions.end(), 0);
    const bool changed = via != a.via || sessions != a.toldSessions;
    const int before = m_live;
    if ((a.via != 0) != (via != 0))
        m_live += via != 0 ? 1 : -1;
    a.via = via;
    if (changed) {
        a.toldSessions = sessions;
        m_host.run([&](LeaseEngine &e) { e.setPresence(did, sessions, via); });
    }
    if (via == 0)
        m_agents.erase(did); // no session, every surface lapsed: it returns as new
    rearm();
    if (m_live != before)
        emit liveAgentsChanged(m_live);
}

void AgentPresence::sweep()
{
    const TimeMs now = m_host.clock().nowMs();
    while (!m_due.empty() && m_due.begin()->first <= now) {
        const std::string did = m_due.begin()->second;
        auto it = m_agents.find(did);
        if (it == m_agents.end()) {
            m_due.erase(m_due.begin());
            continue;
        }
        update(did, it->second);
    }
    rearm();
}

void AgentPresence::rearm()
{
    if (m_due.empty()) {
        m_alarm.stop();
        return;
    }
    const TimeMs due = m_due.begin()->first;
    if (m_alarm.isActive() && due == m_armedFor)
        return;
    m_armedFor = due;
    const TimeMs now = m_host.clock().nowMs();
    m_alarm.start(std::chrono::milliseconds(std::max<TimeMs>(0, due - now)));
}

} // namespace leasehold
