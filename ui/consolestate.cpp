#include "consolestate.h"

#include "wording.h"

#include <QObject>
#include <QStringList>

using namespace leasehold;

std::optional<Incident::Kind> incidentKind(const LedgerEvent &e)
{
    if (e.kind == EventKind::Refused && e.reason == "deadlock")
        return Incident::Kind::Deadlock;
    if (e.kind == EventKind::Expired)
        return Incident::Kind::Expiry;
    if (e.kind == EventKind::AdminSuspend && e.facts.suspended)
        return Incident::Kind::Suspension;
    if (e.kind == EventKind::ReleaseRequestOverdue)
        return Incident::Kind::Overdue;
    return std::nullopt;
}

std::vector<Incident> ConsoleState::absorb(ConsoleFramePtr frame)
{
    std::vector<Incident> incidents;
    const std::string before = m_frame ? m_frame->facts.storeHealth : std::string("ok");
    m_frame = std::move(frame);
    const Snapshot &now = m_frame->snapshot;
    // The store falling ill or recovering is said once, when it happens.
    const ServiceFacts &facts = m_frame->facts;
    if (facts.storeHealth != before) {
        const bool ok = facts.storeHealth == "ok";
        incidents.push_back(
            {Incident::Kind::Store,
             {},
             {},
             ok ? QObject::tr("The store records changes again; grants resume")
                : QObject::tr("The store cannot record changes: %1. New grants are refused "
                              "until it recovers")
                      .arg(QString::fromStdString(facts.storeProblem)),
             now.at,
             0});
    }

    for (const LedgerEvent &e : m_frame->events) {
        if (e.kind == EventKind::Refused) {
            m_refusals.emplace_back(e.at, e.resource);
            ++m_refusalsRecorded;
            if (m_refusals.size() > kRefusalMemory)
                m_refusals.pop_front();
        }
        const std::optional<Incident::Kind> kind = incidentKind(e);
        if (!kind)
            continue;
        const QString agent = QString::fromStdString(e.actorDid);
        const QString resource = QString::fromStdString(e.resource);
        switch (*kind) {
        case Incident::Kind::Deadlock: {
            const std::vector<CycleStep> &cycle = e.facts.cycle;
            DeadlockRecord d{e.seq,
                             e.at,
                             agent,
                             resource,
                             QString::fromStdString(e.facts.holder),
                             cycle.size() > 1 ? QString::fromStdString(cycle[1].resource)
                                              : QString(),
                             cyclePath(cycle),
                             cycle};
            m_deadlocks.push_back(d);
            if (m_deadlocks.size() > kDeadlockMemory)
                m_deadlocks.pop_front();
            incidents.push_back({*kind, agent, resource,
                                 QObject::tr("%1 asked for %2, held by %3; waiting would close "
                                             "the cycle %4")
                                     .arg(agent, resource, d.holder, d.cycle),
                                 e.at, e.seq});
            break;
        }
        case Incident::Kind::Expiry:
            m_lastExpiry[e.actorDid] = e.at;
            incidents.push_back({*kind, agent, resource,
                                 QObject::tr("%1 let its lease on %2 expire without releasing it")
                                     .arg(agent, resource),
                                 e.at, e.seq});
            break;
        case Incident::Kind::Suspension: {
            const QString target = QString::fromStdString(e.facts.target);
            incidents.push_back({*kind,
                                 target,
                                 {},
                                 QObject::tr("%1 was suspended by %2").arg(target, agent),
                                 e.at,
                                 e.seq});
            break;
        }
        case Incident::Kind::Overdue:
            incidents.push_back(
                {*kind, agent, resource,
                 QObject::tr("%1 has not answered the release request for %2 by %3 (%4 urgency); "
                             "an admin may force it from the agent's details")
                     .arg(agent, resource, QString::fromStdString(e.facts.requester),
                          QString::fromStdString(e.facts.urgency)),
                 e.at, e.seq});
            break;
        case Incident::Kind::Store: // from the facts, never from a ledger event
            break;
        }
    }

    while (!m_refusals.empty() && now.at - m_refusals.front().first > kRefusalMemoryMs)
        m_refusals.pop_front();

    for (const TrustInfo &t : now.trust) {
        auto &history = m_trustHistory[t.actorDid];
        if (history.empty() || history.back().second != t.score) {
            history.emplace_back(now.at, t.score);
            if (history.size() > kTrustPoints)
                history.pop_front();
        }
    }

    if (m_trust.empty() || now.at - m_trust.back().first >= 5000) {
        std::map<std::string, double> scores;
        for (const TrustInfo &t : now.trust)
            scores.emplace(t.actorDid, t.score);
        m_trust.emplace_back(now.at, std::move(scores));
        while (m_trust.size() > 2 && now.at - m_trust[1].first >= kTrendWindowMs)
            m_trust.pop_front();
    }

    // Rates over at least a second, so 10 frames a second do not make them jitter.
    if (m_rateBaseAt == 0) {
        m_rateBaseAt = now.at;
        m_rateBase = now.counters;
        m_requestBase = m_frame->facts.requests;
    } else if (now.at - m_rateBaseAt >= 1000) {
        const double seconds = double(now.at - m_rateBaseAt) / 1000.0;
        m_grantRate = double(now.counters.grants - m_rateBase.grants) / seconds;
        m_refusalRate = double(now.counters.refusalsTotal() - m_rateBase.refusalsTotal()) / seconds;
        m_requestRate = double(m_frame->facts.requests - m_requestBase) / seconds;
        m_rateBaseAt = now.at;
        m_rateBase = now.counters;
        m_requestBase = m_frame->facts.requests;
    }
    return incidents;
}

std::int64_t ConsoleState::lastExpiry(const std::string &did) const
{
    const auto it = m_lastExpiry.find(did);
    return it == m_lastExpiry.end() ? 0 : it->second;
}

const std::deque<std::pair<std::int64_t, double>> &
ConsoleState::trustHistory(const std::string &did) const
{
    static const std::deque<std::pair<std::int64_t, double>> none;
    const auto it = m_trustHistory.find(did);
    return it == m_trustHistory.end() ? none : it->second;
}

double ConsoleState::trustTrend(const std::string &did, double now) const
{
    if (m_trust.empty())
        return 0;
    const auto &oldest = m_trust.front().second;
    const auto it = oldest.find(did);
    return it == oldest.end() ? 0 : now - it->second;
}
