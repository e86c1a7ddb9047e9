#pragma once

#include <QPointF>
#include <QString>
#include <QStringList>

#include <map>
#include <vector>

class ConsoleState;

// The wait-for graph of one moment, as the console draws it: agents are nodes; an edge runs from
// an agent that waits (a parked wait) or wants (a recent refusal) to the agent holding what it
// asked for, labelled with the resource. Edges on a live cycle, and the path of the newest
// deadlock the engine refused within the last minute, are marked. Nodes keep their place while
// they stay in the graph, so the picture does not jump from one frame to the next; a node that
// leaves frees its place for the next newcomer.
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
        QString did;
        QPointF pos;       // the centre of its place
        QStringList holds; // the resources it holds, sorted
        int waits = 0;     // edges out of it
        Mark mark = Mark::None;

        friend bool operator==(const Node &, const Node &) = default;
    };
    struct Edge
    {
        QString from, to, resource;
        bool parked = false;  // a parked wait; false: a recent refusal that still wants it
        bool refused = false; // the refused step of a deadlock: never a wait
        Mark mark = Mark::None;

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

    static constexpr std::int64_t kRefusedMemoryMs = 60'000;
    static constexpr int kMaxNodes = 200;
    static constexpr int kColumns = 6;
    static constexpr double kCellWidth = 320;
    static constexpr double kCellHeight = 170;

private:
    void rebuild(const ConsoleState &state);
    QPointF placeOf(int slot) const;

    std::vector<Node> m_nodes;
    std::vector<Edge> m_edges;
    QString m_refusedPath;
    QStringList m_livePaths;
    int m_hidden = 0;
    std::map<QString, int> m_slots; // did -> place, kept across updates
};
