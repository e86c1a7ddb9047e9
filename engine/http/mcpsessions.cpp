#include "mcpsessions.h"

#include "agentpresence.h"
#include "enginehost.h"
#include "logging.h"

#include <QRandomGenerator>

#include <array>

namespace leasehold {

namespace {

QByteArray randomId()
{
    std::array<quint32, 8> words;
    QRandomGenerator::system()->fillRange(words.data(), words.size());
    return QByteArray(reinterpret_cast<const char *>(words.data()), sizeof(words)).toHex();
}

} // namespace

McpSessions::McpSessions(EngineHost &host, AgentPresence &presence, std::int64_t liveWindowMs,
                         std::size_t maxSessions, QObject *parent)
    : QObject(parent)
    , m_host(host)
    , m_presence(presence)
    , m_windowMs(liveWindowMs)
    , m_maxSessions(maxSessions)
{
    m_alarm.setSingleShot(true);
    m_alarm.setTimerType(Qt::CoarseTimer);
    connect(&m_alarm, &QTimer::timeout, this, &McpSessions::sweep);
}

McpSessions::~McpSessions() = default;

McpSession &McpSessions::add(std::string protocolVersion, std::string clientName,
                             std::string keyDid, std::string agent, Via via, bool transient)
{
    auto session = std::make_unique<McpSession>();
    session->id = randomId();
    session->protocolVersion = std::move(protocolVersion);
    session->clientName = std::move(clientName);
    session->keyDid = std::move(keyDid);
    session->agent = std::move(agent);
    session->via = via;
    session->transient = transient;
    session->lastSeen = m_host.clock().nowMs();
    McpSession &out = *session;
    m_sessions.emplace(out.id.toStdString(), std::move(session));
    return out;
}

McpSession &McpSessions::create(std::string protocolVersion, std::string clientName,
                                std::string keyDid, std::string agent, Via via)
{
    if (size() >= m_maxSessions && !m_byLastSeen.empty()) {
        const QByteArray oldest = m_byLastSeen.begin()->second->id;
        qCInfo(lcService) << "session table full; ending the least recently seen session";
        end(oldest);
    }
    McpSession &out = add(std::move(protocolVersion), std::move(clientName), std::move(keyDid),
                          std::move(agent), via, false);
    m_byLastSeen.insert({out.lastSeen, &out});
    setLive(out, true);
    rearm();
    return out;
}

McpSession &McpSessions::openTransient(std::string protocolVersion, std::string clientName,
                                       std::string keyDid, std::string agent, Via via)
{
    McpSession &out = add(std::move(protocolVersion), std::move(clientName), std::move(keyDid),
                          std::move(agent), via, true);
    m_transient.insert(&out);
    return out;
}

McpSession *McpSessions::findTransient(const std::string &keyDid, const std::string &agent,
                                       const std::string &requestKey)
{
    for (McpSession *session : m_transient)
        if (session->keyDid == keyDid && (agent.empty() || session->agent == agent) &&
            (session->pending.count(requestKey) > 0 || session->withdrawable.count(requestKey) > 0))
            return session;
    return nullptr;
}

McpSession *McpSessions::find(const QByteArray &id)
{
    auto it = m_sessions.find(id.toStdString());
    return it == m_sessions.end() ? nullptr : it->second.get();
}

bool McpSessions::end(const QByteArray &id)
{
    auto it = m_sessions.find(id.toStdString());
    if (it == m_sessions.end())
        return false;
    std::unique_ptr<McpSession> session = std::move(it->second);
    m_sessions.erase(it);
    m_transient.erase(session.get());
    setLive(*session, false);
    m_byLastSeen.erase({session->lastSeen, session.get()});
    auto pending = std::move(session->pending);
    for (const auto &[requestId, waitId] : pending)
        m_host.cancelWait(waitId);
    auto withdrawable = std::move(session->withdrawable);
    for (const auto &[requestId, withdraw] : withdrawable)
        withdraw();
    rearm();
    return true;
}

std::vector<std::uint64_t> McpSessions::pendingWaits() const
{
    std::vector<std::uint64_t> out;
    for (const auto &[id, session] : m_sessions)
        for (const auto &[requestId, waitId] : session->pending)
            out.push_back(waitId);
    return out;
}

void McpSessions::forgetWait(const QByteArray &id, std::uint64_t waitId)
{
    McpSession *session = find(id);
    if (!session)
        return;
    for (auto it = session->pending.begin(); it != session->pending.end(); ++it) {
        if (it->second == waitId) {
            session->pending.erase(it);
            return;
        }
    }
}

void McpSessions::touch(McpSession &session)
{
    const TimeMs now = m_host.clock().nowMs();
    if (session.live)
        m_liveBySeen.erase({session.lastSeen, &session});
    m_byLastSeen.erase({session.lastSeen, &session});
    session.lastSeen = now;
    m_byLastSeen.insert({now, &session});
    if (session.live)
        m_liveBySeen.insert({now, &session});
    else
        setLive(session, true);
    rearm();
}

void McpSessions::bind(McpSession &session, const std::string &agent)
{
    if (!session.agent.empty() || agent.empty())
        return;
    session.agent = agent;
    if (session.transient)
        m_presence.seen(agent, session.via); // named by its first tool call, in open mode
    if (session.live)
        countAgent(agent, session.via, +1);
}

int McpSessions::liveAgents() const
{
    return m_presence.liveAgents();
}

void McpSessions::sweep()
{
    const TimeMs now = m_host.clock().nowMs();
    while (!m_liveBySeen.empty() && m_liveBySeen.begin()->first + m_windowMs <= now)
        setLive(*m_liveBySeen.begin()->second, false);
    rearm();
}

void McpSessions::setLive(McpSession &session, bool live)
{
    if (session.live == live)
        return;
    session.live = live;
    if (live)
        m_liveBySeen.insert({session.lastSeen, &session});
    else
        m_liveBySeen.erase({session.lastSeen, &session});
    if (!session.agent.empty())
        countAgent(session.agent, session.via, live ? +1 : -1);
}

void McpSessions::countAgent(const std::string &agent, Via via, int delta)
{
    const auto key = std::make_pair(agent, via);
    int &n = m_liveByAgent[key];
    n += delta;
    const int sessions = n;
    if (n <= 0)
        m_liveByAgent.erase(key);
    m_presence.setSessions(agent, via, sessions);
}

void McpSessions::rearm()
{
    if (m_liveBySeen.empty()) {
        m_alarm.stop();
        return;
    }
    const TimeMs due = m_liveBySeen.begin()->first + m_windowMs;
    if (m_alarm.isActive() && due == m_armedFor)
        return; // the common case: a request from a session that is not the next to lapse
    m_armedFor = due;
    const TimeMs now = m_host.clock().nowMs();
    m_alarm.start(std::chrono::milliseconds(std::max<TimeMs>(0, due - now)));
}

} // namespace leasehold
