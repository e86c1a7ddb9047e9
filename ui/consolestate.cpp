#include "consolestate.h"

#include <QObject>
#include <QStringList>

using namespace leasehold;

namespace {

// The value of `key=` in a "k=v k=v" detail, or empty.
QString detailValue(const std::string &detail, const char *key)
{
    const std::string needle = std::string(key) + "=";
    std::size_t at = 0;
    while ((at = detail.find(needle, at)) != std::string::npos) {
        if (at == 0 || detail[at - 1] == ' ') {
            const std::size_t begin = at + needle.size();
            const std::size_t end = detail.find(' ', begin);
            return QString::fromStdString(detail.substr(begin, end - begin));
        }
        at += needle.size();
    }
    return {};
}

} // namespace

std::vector<Incident> ConsoleState::absorb(ConsoleFramePtr frame)
{
    std::vector<Incident> incidents;
    m_frame = std::move(frame);
    const Snapshot &now = m_frame->snapshot;

    for (const LedgerEvent &e : m_frame->events) {
        const QString agent = QString::fromStdString(e.actorDid);
        const QString resource = QString::fromStdString(e.resource);
        if (e.kind == EventKind::Refused && e.reason == "deadlock") {
            DeadlockRecord d{e.seq,
                             e.at,
                             agent,
                             resource,
                             detailValue(e.detail, "holder"),
                             detailValue(e.detail, "waiting_on"),
                             detailValue(e.detail, "cycle").split(',').join(" \u2192 ")};
            if (!d.cycle.isEmpty())
                d.cycle += " \u2192 " + d.cycle.section(QStringLiteral(" \u2192 "), 0, 0);
            m_deadlocks.push_back(d);
            if (m_deadlocks.size() > kDeadlockMemory)
                m_deadlocks.pop_front();
            incidents.push_back({Incident::Kind::Deadlock, agent, resource,
                                 QObject::tr("Deadlock refused: %1 asked for %2, held by %3, "
                                             "who waits for %4")
                                     .arg(agent, resource, d.holder, d.waitingOn),
                                 e.at, e.seq});
        } else if (e.kind == EventKind::Expired) {
            m_lastExpiry[e.actorDid] = e.at;
            incidents.push_back({Incident::Kind::Expiry, agent, resource,
                                 QObject::tr("%1 let its lease on %2 expire without releasing it")
                                     .arg(agent, resource),
                                 e.at, e.seq});
        } else if (e.kind == EventKind::AdminSuspend &&
                   detailValue(e.detail, "suspended") == QLatin1String("true")) {
            const QString target = detailValue(e.detail, "target");
            incidents.push_back({Incident::Kind::Suspension,
                                 target,
                                 {},
                                 QObject::tr("%1 was suspended by %2").arg(target, agent),
                                 e.at,
                                 e.seq});
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

double ConsoleState::trustTrend(const std::string &did, double now) const
{
    if (m_trust.empty())
        return 0;
    const auto &oldest = m_trust.front().second;
    const auto it = oldest.find(did);
    return it == oldest.end() ? 0 : now - it->second;
}
