#include "resourcetree.h"

#include "consolestate.h"

#include <algorithm>
#include <utility>

using namespace leasehold;

namespace {

// Whether `segment` holds a glob character that is not escaped.
bool isGlob(const QString &segment)
{
    for (qsizetype i = 0; i < segment.size(); ++i) {
        const QChar c = segment[i];
        if (c == QLatin1Char('\\')) {
            ++i; // an escaped character is itself
            continue;
        }
        if (c == QLatin1Char('*') || c == QLatin1Char('?') || c == QLatin1Char('['))
            return true;
    }
    return false;
}

} // namespace

QStringList ResourceTree::pathsOf(const QString &resource)
{
    QStringList paths;
    const qsizetype colon = resource.indexOf(QLatin1Char(':'));
    const qsizetype bodyStart = colon < 0 ? 0 : colon + 1;
    if (colon >= 0)
        paths << resource.left(bodyStart);
    // Each '/' that is not escaped ends a folder.
    for (qsizetype i = bodyStart; i < resource.size(); ++i) {
        if (resource[i] == QLatin1Char('\\')) {
            ++i;
            continue;
        }
        if (resource[i] == QLatin1Char('/') && i > bodyStart)
            paths << resource.left(i);
    }
    if (resource.size() > bodyStart)
        paths << resource;
    return paths;
}

const ResourceTree::Node *ResourceTree::node(const QString &path) const
{
    const auto it = m_nodes.find(path);
    return it == m_nodes.end() ? nullptr : &it->second;
}

ResourceTree::Node *ResourceTree::add(const std::string &resource, int Node::*field)
{
    // The node for `resource` and every node above it, made when new, each counted once.
    QString parent;
    Node *last = nullptr;
    for (const QString &path : pathsOf(QString::fromStdString(resource))) {
        auto [it, fresh] = m_nodes.try_emplace(path);
        Node &n = it->second;
        if (fresh) {
            n.path = path;
            n.parent = parent;
            n.label =
                parent.isEmpty() ? path : path.mid(parent.size() + (parent.endsWith(':') ? 0 : 1));
            n.pattern = isGlob(n.label);
        }
        ++(n.*field);
        parent = path;
        last = &n;
    }
    return last;
}

bool ResourceTree::update(const ConsoleState &state)
{
    const std::map<QString, Node> before = std::exchange(m_nodes, {});
    const int maxBefore = std::exchange(m_maxContention, 1);
    if (const ConsoleFrame *f = state.frame()) {
        for (const LeaseInfo &l : f->snapshot.leases) {
            if (Node *n = add(l.resource, &Node::held))
                n->holders << QString::fromStdString(l.holder);
        }
        for (const WaiterInfo &w : f->snapshot.waiters)
            add(w.resource, w.parked ? &Node::parked : &Node::wants);
        for (const auto &[at, resource] : state.recentRefusals())
            add(resource, &Node::refusals);
    }
    for (auto &[path, n] : m_nodes) {
        n.holders.sort();
        n.holders.removeDuplicates();
        m_maxContention = std::max(m_maxContention, n.contention());
    }
    return m_nodes != before || m_maxContention != maxBefore;
}
