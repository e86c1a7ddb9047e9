#pragma once

#include "waitgraphlayout.h"

#include <QPointF>
#include <QString>
#include <QStringList>

#include <map>
#include <set>
#include <tuple>
#include <vector>

class ConsoleState;

// The wait-for graph of one moment, as the console draws it: agents are nodes; an edge runs from
// an agent that waits (a parked wait) or wants (a recent refusal) to the agent holding what it
// asked for, labelled with the resource. Edges on a live cycle, and the path of the newest
// deadlock the engine refused within the last minute, are marked. Laid out in layers
// (WaitGraphLayout): holders on the left, those waiting for them to the right, a cycle's
// members together in one column; a node keeps its place while it stays in its column.
//
// A crowd — kCrowd or more agents that wait for the same resource of the same holder and take
// part in nothing else — is one node with a count, until it is expanded (expand()), so thirty
// agents queued behind one holder read as one arrow, not thirty.
//
// A pure function of ConsoleState plus the places already handed out; no widgets.
//
// Thread: the UI thread.
class WaitGraphModel
{
public:
    enum class Mark { None, LiveCycle, RefusedCycle };

    struct Node
    {
        QString did;       // a crowd's: crowdKey() of its resource and holder
        QPointF pos;       // the centre of its place
        QStringList holds; // the resources it holds, sorted
        int waits = 0;     // edges out of it
        Mark mark = Mark::None;
        QStringList members;  // a crowd: the agents in it, sorted; empty for an agent
        bool inCycle = false; // waits in a ring with others (drawn as a loop)

        bool crowd() const { return !members.isEmpty(); }
        friend bool operator==(const Node &, const Node &) = default;
    };
    struct Edge
    {
        QString from, to, resource;
        bool parked = false;  // a parked wait; false: a recent refusal that still wants it
        bool refused = false; // the refused step of a deadlock: never a wait
        Mark mark = Mark::None;
        int count = 1; // a crowd's arrow: how many wait; parked when any of them is parked

        friend bool operator==(const Edge &, const Edge &) = default;
    };

    // Takes in the state's frame (deadlocks refused before `now - kRefusedMemoryMs` are left
    // out); true when the graph changed.
    bool update(const ConsoleState &state);

    const std::vector<Node> &nodes() const { return m_nodes; }
    const std::vector<Edge> &edges() const { return m_edges; }
    const Node *node(const QString &did) const;
    // The refused deadlock drawn, as "a → r → b → s → a"; empty when none.
    QString refusedPath() const { return m_refusedPath; }
    // Each live cycle, the same way.
    const QStringList &livePaths() const { return m_livePaths; }
    // Nodes left out because the graph holds at most kMaxNodes.
    int hiddenNodes() const { return m_hidden; }
    // The node an agent is drawn in: its own, or its crowd's; nullptr when not in the graph.
    const Node *nodeOf(const QString &did) const;

    // The crowd waiting for `resource` of `holder` is drawn agent by agent (or, with false, as
    // one node again) from the next update on.
    void expand(const QString &crowd, bool expanded = true);
    bool expanded(const QString &crowd) const { return m_expanded.count(crowd) > 0; }
    static QString crowdKey(const QString &resource, const QString &holder);

    static constexpr std::int64_t kRefusedMemoryMs = 60'000;
    static constexpr int kMaxNodes = 200;
    static constexpr int kCrowd = 5;

private:
    void rebuild(const ConsoleState &state);
    // Folds each crowd that is not expanded into one node's worth of edges.
    void gather(std::map<std::tuple<QString, QString, QString>, Edge> &edges,
                std::map<QString, QStringList> &crowds) const;

    std::vector<Node> m_nodes;
    std::vector<Edge> m_edges;
    QString m_refusedPath;
    QStringList m_livePaths;
    int m_hidden = 0;
    WaitGraphLayout m_layout;
    std::set<QString> m_expanded;
};
