#pragma once

#include <QPointF>
#include <QString>

#include <map>
#include <set>
#include <utility>
#include <vector>

// Where the wait-for graph's nodes go, as a layered drawing read from left to right: those
// nobody they wait for (the holders) in the first column, each waiter one column to the right
// of the furthest of those it waits for, so every arrow points left; the members of a cycle
// share one column, one under the other, their arrows drawn as a loop between them. A node
// keeps its row while it stays in its column, so the picture does not jump between frames;
// a newcomer takes the free row nearest to the rows of those it waits for.
//
// Pure: the node names and arrows in, positions out, plus the rows handed out so far.
//
// Thread: the UI thread.
class WaitGraphLayout
{
public:
    static constexpr double kColumnWidth = 400;
    static constexpr double kRowHeight = 96;

    // `edges` are (waiter, holder) pairs between `nodes`. Returns each node's position.
    std::map<QString, QPointF> place(const std::set<QString> &nodes,
                                     const std::vector<std::pair<QString, QString>> &edges);
    // The groups of nodes that wait for each other in a ring (cycles), from the last place().
    const std::vector<std::vector<QString>> &cycles() const { return m_cycles; }

private:
    struct Slot
    {
        int column = 0;
        int row = 0;
    };
    std::map<QString, Slot> m_slots; // kept across frames
    std::vector<std::vector<QString>> m_cycles;
};
