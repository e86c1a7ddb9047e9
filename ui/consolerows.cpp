#include "consolerows.h"

#include "wording.h"

#include <QCoreApplication>

#include <map>

using namespace leasehold;

namespace consolerows {

namespace {

QString q(const std::string &s)
{
    return QString::fromStdString(s);
}

QString tr(const char *text)
{
    return QCoreApplication::translate("ConsoleRows", text);
}

QVariant big(std::uint64_t n)
{
    return QVariant::fromValue(qulonglong(n));
}

// A row is an incident when its agent let a lease expire within the last minute.
bool recentlyExpired(const ConsoleState &state, const std::string &did, std::int64_t now)
{
    const std::int64_t at = state.lastExpiry(did);
    return at > 0 && now - at < 60'000;
}

} // namespace

std::vector<TableColumn> holderColumns()
{
    return {{tr("Resource")},
            {tr("Holder"), ColumnKind::Agent},
            {tr("Mode")},
            {tr("Token"), ColumnKind::Number, tr("Fencing token: strictly increasing")},
            {tr("Granted"), ColumnKind::Since},
            {tr("Expires"), ColumnKind::Until},
            {tr("TTL"), ColumnKind::Duration},
            {tr("Pins"), ColumnKind::Number},
            {tr("State")},
            {tr("Lease")}};
}

std::vector<TableRow> holderRows(const ConsoleState &state)
{
    std::vector<TableRow> rows;
    if (!state.frame())
        return rows;
    const Snapshot &s = state.frame()->snapshot;
    rows.reserve(s.leases.size());
    // Converted once per frame, not once per row: a table of 10 000 leases shares them.
    const QString modes[] = {q(std::string(modeName(Mode::Read))),
                             q(std::string(modeName(Mode::Write))),
                             q(std::string(modeName(Mode::Delete)))};
    const QString ending = tr("ending when unpinned");
    for (const LeaseInfo &l : s.leases) {
        const QString id = q(l.leaseId);
        TableRow row{id,
                     {q(l.resource), q(l.holder), modes[int(l.mode)], big(l.token),
                      qint64(l.grantedAt), qint64(l.expiresAt), qint64(l.ttlMs), l.pins,
                      l.pendingRelease ? ending : QString(), id}};
        if (l.pendingRelease || l.expiresAt - s.at < 5000)
            row.mark = RowMark::Attention;
        rows.push_back(std::move(row));
    }
    return rows;
}

std::vector<TableColumn> queueColumns()
{
    return {{tr("Agent"), ColumnKind::Agent},
            {tr("Resource")},
            {tr("Mode")},
            {tr("Kind"), ColumnKind::Text,
             tr("parked: waiting in a bounded queue; wants: refused recently, may retry")},
            {tr("Waiting for")},
            {tr("Since"), ColumnKind::Since},
            {tr("Deadline"), ColumnKind::Until}};
}

std::vector<TableRow> queueRows(const ConsoleState &state)
{
    std::vector<TableRow> rows;
    if (!state.frame())
        return rows;
    for (const WaiterInfo &w : state.frame()->snapshot.waiters) {
        const QString key = w.parked
                                ? QStringLiteral("wait:%1:%2").arg(w.waitId).arg(q(w.resource))
                                : QStringLiteral("want:%1:%2").arg(q(w.actorDid), q(w.resource));
        rows.push_back({key,
                        {q(w.actorDid), q(w.resource), q(std::string(modeName(w.mode))),
                         w.parked ? tr("parked") : tr("wants"), q(w.holder), qint64(w.since),
                         qint64(w.deadline)}});
    }
    return rows;
}

std::vector<TableColumn> deadlockColumns()
{
    return {{tr("Agent"), ColumnKind::Agent},
            {tr("Wants")},
            {tr("Held by")},
            {tr("Who waits for"), ColumnKind::Text, tr("What the holder is itself waiting for")},
            {tr("Cycle")},
            {tr("Status")},
            {tr("When"), ColumnKind::Since}};
}

std::vector<TableRow> deadlockRows(const ConsoleState &state)
{
    std::vector<TableRow> rows;
    if (!state.frame())
        return rows;
    const Snapshot &s = state.frame()->snapshot;
    for (const DeadlockCycle &c : s.deadlocks) {
        const QString path = cyclePath(c.steps);
        rows.push_back(
            {QStringLiteral("live:") + path,
             {q(c.steps[0].agent), q(c.steps[0].resource), q(c.steps[1].agent),
              q(c.steps[1].resource), path,
              tr("live: %1 waiting").arg(countOf(qint64(c.steps.size()), "agent", "agents")),
              qint64(s.at)},
             RowMark::Incident});
    }
    for (const DeadlockRecord &d : state.deadlocks()) {
        rows.push_back(
            {QStringLiteral("seq:%1").arg(d.seq),
             {d.agent, d.resource, d.holder, d.waitingOn, d.cycle, tr("refused"), qint64(d.at)},
             s.at - d.at < 60'000 ? RowMark::Incident : RowMark::None});
    }
    return rows;
}

std::vector<TableColumn> trustColumns()
{
    return {{tr("Agent"), ColumnKind::Agent},
            {tr("Score"), ColumnKind::Score, tr("0 to 100; an expiry without release costs 5")},
            {tr("Trend"), ColumnKind::Score, tr("Change over about the last minute")},
            {tr("Releases"), ColumnKind::Number},
            {tr("Expiries"), ColumnKind::Number},
            {tr("Suspended"), ColumnKind::Flag}};
}

std::vector<TableRow> trustRows(const ConsoleState &state)
{
    std::vector<TableRow> rows;
    if (!state.frame())
        return rows;
    const Snapshot &s = state.frame()->snapshot;
    std::map<std::string, bool> suspended;
    for (const AgentInfo &a : s.agents)
        suspended[a.actorDid] = a.suspended;
    for (const TrustInfo &t : s.trust) {
        TableRow row{q(t.actorDid),
                     {q(t.actorDid), t.score, state.trustTrend(t.actorDid, t.score),
                      big(t.releases), big(t.expiries), suspended[t.actorDid]}};
        if (recentlyExpired(state, t.actorDid, s.at))
            row.mark = RowMark::Incident;
        rows.push_back(std::move(row));
    }
    return rows;
}

std::vector<TableColumn> pinColumns()
{
    return {{tr("Resource")},
            {tr("Holder"), ColumnKind::Agent},
            {tr("Pinned"), ColumnKind::Since},
            {tr("Bound"), ColumnKind::Until, tr("The pin ends by itself at this time")},
            {tr("Lease")},
            {tr("Pin")}};
}

std::vector<TableRow> pinRows(const ConsoleState &state)
{
    std::vector<TableRow> rows;
    if (!state.frame())
        return rows;
    for (const PinInfo &p : state.frame()->snapshot.pins)
        rows.push_back({q(p.pinId),
                        {q(p.resource), q(p.holder), qint64(p.since), qint64(p.deadline),
                         q(p.leaseId), q(p.pinId)}});
    return rows;
}

std::vector<TableColumn> agentColumns()
{
    return {{tr("Agent"), ColumnKind::Agent},
            {tr("Last seen"), ColumnKind::Since},
            {tr("Connected via"), ColumnKind::Text,
             tr("How the agent reached Leasehold within the live window: MCP, REST, the guard in "
                "front of its MCP servers, a coding agent's hook, or the git guard")},
            {tr("Live sessions"), ColumnKind::Number, tr("MCP sessions seen recently")},
            {tr("Leases"), ColumnKind::Number},
            {tr("Waits"), ColumnKind::Number},
            {tr("Trust"), ColumnKind::Score},
            {tr("Suspended"), ColumnKind::Flag},
            {tr("Keys"), ColumnKind::Number, tr("Bearer keys that speak for this agent")}};
}

std::vector<TableRow> agentRows(const ConsoleState &state)
{
    std::vector<TableRow> rows;
    if (!state.frame())
        return rows;
    const ConsoleFrame &f = *state.frame();
    std::map<std::string, int> keys = f.facts.keysByAgent;
    for (const AgentInfo &a : f.snapshot.agents) {
        const auto k = keys.find(a.actorDid);
        TableRow row{q(a.actorDid),
                     {q(a.actorDid), qint64(a.lastSeen), q(viaList(a.via)), a.liveSessions,
                      a.leases, a.waits, a.trust, a.suspended, k == keys.end() ? 0 : k->second}};
        if (a.suspended)
            row.mark = RowMark::Attention;
        rows.push_back(std::move(row));
    }
    return rows;
}

std::vector<TableColumn> healthColumns()
{
    return {{tr("Severity")},
            {tr("Finding")},
            {tr("Fix"), ColumnKind::Text, tr("The command that fixes it")},
            {tr("Agent"), ColumnKind::Agent, tr("The agent it is about: the levers act on it")}};
}

std::vector<TableRow> healthRows(const ConsoleState &state)
{
    std::vector<TableRow> rows;
    const ConsoleFrame *f = state.frame();
    if (!f)
        return rows;
    std::map<QString, int> seen; // the same code and agent twice (two cycles) keeps both
    for (const HealthFinding &h : healthFindings(f->snapshot, f->facts.health, f->snapshot.at)) {
        QString key = QString::fromStdString(h.code + ':' + h.agent);
        if (const int n = seen[key]++)
            key += QStringLiteral(":%1").arg(n);
        rows.push_back({key,
                        {QLatin1String(healthSeverityName(h.severity)), h.what, h.fix, q(h.agent)},
                        h.severity == HealthSeverity::Critical  ? RowMark::Incident
                        : h.severity == HealthSeverity::Warning ? RowMark::Attention
                                                                : RowMark::None});
    }
    return rows;
}

std::size_t holderCount(const ConsoleState &state)
{
    return state.frame() ? state.frame()->snapshot.leases.size() : 0;
}

std::size_t queueCount(const ConsoleState &state)
{
    return state.frame() ? state.frame()->snapshot.waiters.size() : 0;
}

std::size_t deadlockCount(const ConsoleState &state)
{
    return state.frame() ? state.frame()->snapshot.deadlocks.size() + state.deadlocks().size() : 0;
}

std::size_t trustCount(const ConsoleState &state)
{
    return state.frame() ? state.frame()->snapshot.trust.size() : 0;
}

std::size_t pinCount(const ConsoleState &state)
{
    return state.frame() ? state.frame()->snapshot.pins.size() : 0;
}

std::size_t agentCount(const ConsoleState &state)
{
    return state.frame() ? state.frame()->snapshot.agents.size() : 0;
}

std::size_t healthCount(const ConsoleState &state)
{
    const ConsoleFrame *f = state.frame();
    return f ? healthFindings(f->snapshot, f->facts.health, f->snapshot.at).size() : 0;
}

} // namespace consolerows
