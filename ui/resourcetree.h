#pragma once

#include <QString>
#include <QStringList>

#include <map>
#include <string>

class ConsoleState;

// Where the fleet fights, as a tree: every resource that is held, waited for, wanted or was
// refused in the last minute, under its scheme (`fs:`, `lock:`, ...) and its folders; a pattern
// such as `src/**/*.ts` is a path of its own, its glob segments marked. Each node counts its
// whole subtree: leases held, parked waits, wants (recent refusals still wanting) and refusals
// of the last minute.
//
// A pure function of ConsoleState; no widgets.
//
// Thread: the UI thread.
class ResourceTree
{
public:
    struct Node
    {
        QString path;         // "fs:", "fs:src", "fs:src/parser.cpp"
        QString label;        // its last segment ("src"), or the scheme ("fs:")
        QString parent;       // empty for a scheme
        bool pattern = false; // a glob segment (*, ?, [...]) in its label
        int held = 0;
        int parked = 0;
        int wants = 0;
        int refusals = 0;
        QStringList holders; // who holds exactly this resource, sorted

        // How contended its subtree is: what waits, wants or was turned away.
        int contention() const { return parked + wants + refusals; }
        friend bool operator==(const Node &, const Node &) = default;
    };

    // Takes in the state's frame; true when any node changed.
    bool update(const ConsoleState &state);

    // By path; a parent sorts before its children.
    const std::map<QString, Node> &nodes() const { return m_nodes; }
    const Node *node(const QString &path) const;
    // The largest contention of any node, for shading (at least 1).
    int maxContention() const { return m_maxContention; }

    // The paths from the scheme down to `resource`: "fs:", "fs:src", "fs:src/a.cpp".
    static QStringList pathsOf(const QString &resource);

private:
    // Adds one to `field` of the node for `resource` and of every node above it, making those
    // that are new; the resource's own node, or nothing for an empty name.
    Node *add(const std::string &resource, int Node::*field);

    std::map<QString, Node> m_nodes;
    int m_maxContention = 1;
};
