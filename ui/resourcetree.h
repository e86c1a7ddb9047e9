#pragma once

#include <QHash>
#include <QString>
#include <QStringList>

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

class ConsoleState;

// Where the fleet fights, as a tree: every resource that is held, waited for, wanted or was
// refused in the last minute, under its scheme (`fs:`, `lock:`, ...) and its folders; a pattern
// such as `src/**/*.ts` is a path of its own, its glob segments marked. Each node counts its
// whole subtree: leases held, parked waits, wants (recent refusals still wanting) and refusals
// of the last minute. A held resource also lists the open release requests against it.
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
        std::map<QString, int> holderLeases; // who holds exactly this resource, and how often
        // The open release requests against leases on exactly this resource, one line each:
        // "did:agent:b asks did:agent:a · high · 2 min ago · overdue".
        QStringList requests;
        bool requestOverdue = false; // one of them passed its deadline unanswered

        // How contended its subtree is: what waits, wants or was turned away.
        int contention() const { return parked + wants + refusals; }
        // Who holds exactly this resource, sorted.
        QStringList holders() const
        {
            QStringList who;
            for (const auto &[did, leases] : holderLeases)
                who << did;
            return who;
        }
        friend bool operator==(const Node &, const Node &) = default;
    };

    // Takes in the state's frame; true when any node changed.
    bool update(const ConsoleState &state);

    // By path; a parent sorts before its children.
    const std::map<QString, Node> &nodes() const { return m_nodes; }
    const Node *node(const QString &path) const;
    // The first node after `at`'s subtree (nodes below a path follow it in order).
    std::map<QString, Node>::const_iterator
    subtreeEnd(std::map<QString, Node>::const_iterator at) const;
    // How many nodes have `path` as their parent.
    int childCount(const QString &path) const;
    // The largest contention of any node, for shading (at least 1).
    int maxContention() const { return m_maxContention; }

    // The paths from the scheme down to `resource`: "fs:", "fs:src", "fs:src/a.cpp".
    static QStringList pathsOf(const QString &resource);

private:
    // Adds `delta` to `field` of the node for `resource` and of every node above it, making
    // those that are new; `holder` (for a lease) is counted on the resource's own node.
    void add(const std::string &resource, int Node::*field, int delta,
             const std::string *holder = nullptr);
    // Remembers `n` as it was before this update first changed it.
    void touch(Node &n);

    // What a lease counted for when it was last seen.
    struct Counted
    {
        std::string resource;
        std::string holder;
        std::uint64_t seen = 0; // the update that last saw it
    };

    std::map<QString, Node> m_nodes;
    QHash<QString, Node *> m_index; // the same nodes by path, for counting without comparing
    // Leases are counted by what changed since the last frame (a frame of 10 000 leases that
    // changed a few costs a few); waits and refusals, fewer and short-lived, are counted anew.
    std::unordered_map<std::string, Counted> m_leases; // by lease id
    std::vector<std::pair<std::string, int Node::*>> m_transient;
    std::deque<std::string> m_refusals; // the refusals counted, oldest first
    std::vector<QString> m_requested;   // the nodes listing release requests now
    std::uint64_t m_refusalsRecorded = 0;
    std::map<Node *, Node> m_before; // nodes this update changed, as they were
    std::uint64_t m_updates = 0;
    bool m_changed = false; // a node came or went in this update
    int m_maxContention = 1;
};
