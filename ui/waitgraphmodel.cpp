#include "waitgraphmodel.h"

#include "consolestate.h"
#include "wording.h"

#include <algorithm>
#include <set>
#include <tuple>
#include <utility>

using namespace leasehold;

namespace {

QString qs(const std::string &s)
{
    return QString::fromStdString(s);
}

using EdgeKey = std::tuple<QString, QString, QString>; // from, to, resource

} // namespace

const WaitGraphModel::Node *WaitGraphModel::node(const QString &did) const
{
    for (const Node &n : m_nodes) {
        if (n.did == did)
            return &n;
    }
    return nullptr;
}

const WaitGraphModel::Node *WaitGraphModel::nodeOf(const QString &did) const
{
    for (const Node &n : m_nodes) {
        if (n.did == did || n.members.contains(did))
            return &n;
    }
    return nullptr;
}

QString WaitGraphModel::crowdKey(const QString &resource, const QString &holder)
{
    return QStringLiteral("crowd:") + resource + QLatin1Char('@') + holder;
}

void WaitGraphModel::expand(const QString &crowd, bool expanded)
{
    if (expanded)
        m_expanded.insert(crowd);
    else
        m_expanded.erase(crowd);
}

void WaitGraphModel::gather(std::map<EdgeKey, Edge> &edges,
                            std::map<QString, QStringList> &crowds) const
{
    // Who takes part in what: a crowd's members wait for one thing and nothing waits for them.
    std::map<QString, int> out, in;
    for (const auto &[key, e] : edges) {
        ++out[e.from];
        ++in[e.to];
    }
    std::map<std::pair<QString, QString>, std::vector<EdgeKey>> queues; // (resource, holder)
    for (const auto &[key, e] : edges)
        if (out[e.from] == 1 && in[e.from] == 0 && e.mark == Mark::None)
            queues[{e.resource, e.to}].push_back(key);
    for (const auto &[queue, keys] : queues) {
        const QString crowd = crowdKey(queue.first, queue.second);
        if (int(keys.size()) < kCrowd || m_expanded.count(crowd))
            continue;
        Edge folded{crowd, queue.second, queue.first, false, false, Mark::None, int(keys.size())};
        QStringList members;
        for (const EdgeKey &k : keys) {
            const Edge &e = edges.at(k);
            folded.parked = folded.parked || e.parked;
            members << e.from;
            edges.erase(k);
        }
        members.sort();
        crowds[crowd] = members;
        edges.emplace(EdgeKey{crowd, queue.second, queue.first}, folded);
    }
}

bool WaitGraphModel::update(const ConsoleState &state)
{
    const std::vector<Node> nodes = std::exchange(m_nodes, {});
    const std::vector<Edge> edges = std::exchange(m_edges, {});
    const QString refused = std::exchange(m_refusedPath, {});
    const QStringList live = std::exchange(m_livePaths, {});
    const int hidden = std::exchange(m_hidden, 0);
    rebuild(state);
    return nodes != m_nodes || edges != m_edges || refused != m_refusedPath ||
           live != m_livePaths || hidden != m_hidden;
}

void WaitGraphModel::rebuild(const ConsoleState &state)
{
    const ConsoleFrame *f = state.frame();
    if (!f) {
        m_layout = {};
        return;
    }
    const Snapshot &s = f->snapshot;

    // Waits and wants, one edge per (waiter, holder, resource).
    std::map<EdgeKey, Edge> edges;
    for (const WaiterInfo &w : s.waiters) {
        if (w.holder.empty() || w.holder == w.actorDid)
            continue;
        Edge e{qs(w.actorDid), qs(w.holder), qs(w.resource), w.parked, false, Mark::None};
        auto [it, fresh] = edges.try_emplace({e.from, e.to, e.resource}, e);
        if (!fresh)
            it->second.parked = it->second.parked || w.parked;
    }
    // A cycle's steps: each agent waits for its resource, which the next step's agent holds.
    auto mark = [&edges](const std::vector<CycleStep> &steps, Mark how) {
        for (std::size_t i = 0; i < steps.size(); ++i) {
            const CycleStep &step = steps[i];
            const QString from = qs(step.agent);
            const QString to = qs(steps[(i + 1) % steps.size()].agent);
            if (from == to)
                continue;
            Edge &e =
                edges.try_emplace({from, to, qs(step.resource)}, Edge{from, to, qs(step.resource)})
                    .first->second;
            // The first step of a refused cycle is the request the engine turned down.
            if (how == Mark::RefusedCycle && i == 0 && !e.parked)
                e.refused = true;
            if (e.mark != Mark::LiveCycle)
                e.mark = how;
        }
    };
    for (const DeadlockCycle &c : s.deadlocks) {
        mark(c.steps, Mark::LiveCycle);
        m_livePaths << cyclePath(c.steps);
    }
    const std::deque<DeadlockRecord> &refused = state.deadlocks();
    if (!refused.empty() && s.at - refused.back().at <= kRefusedMemoryMs &&
        refused.back().steps.size() > 1) {
        mark(refused.back().steps, Mark::RefusedCycle);
        m_refusedPath = refused.back().cycle;
    }

    std::map<QString, QStringList> crowds;
    gather(edges, crowds);

    // The nodes: every agent (or crowd) on an edge; the marked and the busiest first when there
    // are too many to draw.
    struct Tally
    {
        Mark mark = Mark::None;
        int degree = 0;
        int waits = 0;
    };
    std::map<QString, Tally> tally;
    for (const auto &[key, e] : edges) {
        for (const QString &did : {e.from, e.to}) {
            Tally &t = tally[did];
            t.degree += e.count;
            if (e.mark == Mark::LiveCycle || (e.mark == Mark::RefusedCycle && t.mark == Mark::None))
                t.mark = e.mark;
        }
        ++tally[e.from].waits;
    }
    std::vector<QString> order;
    for (const auto &[did, t] : tally)
        order.push_back(did);
    std::stable_sort(order.begin(), order.end(), [&tally](const QString &a, const QString &b) {
        const Tally &x = tally[a];
        const Tally &y = tally[b];
        return std::make_pair(x.mark != Mark::None, x.degree) >
               std::make_pair(y.mark != Mark::None, y.degree);
    });
    if (int(order.size()) > kMaxNodes) {
        m_hidden = int(order.size()) - kMaxNodes;
        order.resize(kMaxNodes);
    }
    const std::set<QString> shown(order.begin(), order.end());
    std::vector<std::pair<QString, QString>> arrows;
    for (const auto &[key, e] : edges)
        if (shown.count(e.from) && shown.count(e.to))
            arrows.emplace_back(e.from, e.to);
    const std::map<QString, QPointF> at = m_layout.place(shown, arrows);
    std::set<QString> ringed;
    for (const std::vector<QString> &cycle : m_layout.cycles())
        ringed.insert(cycle.begin(), cycle.end());

    std::map<QString, QStringList> holds;
    for (const LeaseInfo &l : s.leases) {
        const QString holder = qs(l.holder);
        if (shown.count(holder))
            holds[holder] << qs(l.resource);
    }
    for (const QString &did : shown) {
        Node n{did,         at.at(did),           holds[did], tally[did].waits, tally[did].mark,
               crowds[did], ringed.count(did) > 0};
        n.holds.sort();
        m_nodes.push_back(std::move(n));
    }
    for (auto &[key, e] : edges) {
        if (shown.count(e.from) && shown.count(e.to))
            m_edges.push_back(std::move(e));
    }
}
