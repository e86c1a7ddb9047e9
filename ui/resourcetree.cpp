#include "resourcetree.h"

#include "consolestate.h"
#include "wording.h"

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

std::map<QString, ResourceTree::Node>::const_iterator
ResourceTree::subtreeEnd(std::map<QString, Node>::const_iterator at) const
{
    // Below "fs:" lies every "fs:…"; below "fs:src" every "fs:src/…" ('0' follows '/').
    const QString &path = at->first;
    if (path.endsWith(QLatin1Char(':')))
        return m_nodes.lower_bound(path.left(path.size() - 1) + QLatin1Char(';'));
    return m_nodes.lower_bound(path + QLatin1Char('0'));
}

int ResourceTree::childCount(const QString &path) const
{
    const auto at = m_nodes.find(path);
    if (at == m_nodes.end())
        return 0;
    int count = 0;
    for (auto it = std::next(at), end = subtreeEnd(at); it != end; ++it)
        count += it->second.parent == path ? 1 : 0;
    return count;
}

const ResourceTree::Node *ResourceTree::node(const QString &path) const
{
    return m_index.value(path);
}

void ResourceTree::touch(Node &n)
{
    m_before.try_emplace(&n, n);
}

void ResourceTree::add(const std::string &resource, int Node::*field, int delta,
                       const std::string *holder)
{
    // The node for `resource` and every node above it, made when new, each counted once.
    QString parent;
    Node *last = nullptr;
    for (const QString &path : pathsOf(QString::fromStdString(resource))) {
        Node *&indexed = m_index[path];
        if (!indexed) {
            m_changed = true;
            Node &n = m_nodes[path];
            n.path = path;
            n.parent = parent;
            n.label =
                parent.isEmpty() ? path : path.mid(parent.size() + (parent.endsWith(':') ? 0 : 1));
            n.pattern = isGlob(n.label);
            indexed = &n;
        }
        touch(*indexed);
        indexed->*field += delta;
        parent = path;
        last = indexed;
    }
    if (!last || !holder)
        return;
    const QString who = QString::fromStdString(*holder);
    if ((last->holderLeases[who] += delta) <= 0)
        last->holderLeases.erase(who);
}

bool ResourceTree::update(const ConsoleState &state)
{
    m_changed = false;
    m_before.clear();
    const std::uint64_t now = ++m_updates;
    for (const auto &[resource, field] : std::exchange(m_transient, {}))
        add(resource, field, -1);
    if (const ConsoleFrame *f = state.frame()) {
        for (const LeaseInfo &l : f->snapshot.leases) {
            auto [it, fresh] = m_leases.try_emplace(l.leaseId);
            it->second.seen = now;
            if (!fresh)
                continue;
            it->second.resource = l.resource;
            it->second.holder = l.holder;
            add(l.resource, &Node::held, 1, &l.holder);
        }
        for (const WaiterInfo &w : f->snapshot.waiters)
            m_transient.emplace_back(w.resource, w.parked ? &Node::parked : &Node::wants);
        for (const auto &[resource, field] : m_transient)
            add(resource, field, 1);
        // Refusals of the last minute: those that aged out of the state's memory leave its
        // front, the new ones came at its back.
        const auto &refusals = state.recentRefusals();
        const std::size_t fresh = std::size_t(std::min<std::uint64_t>(
            state.refusalsRecorded() - m_refusalsRecorded, refusals.size()));
        m_refusalsRecorded = state.refusalsRecorded();
        std::size_t aged = std::min(m_refusals.size(), m_refusals.size() + fresh - refusals.size());
        for (; aged > 0; --aged) {
            add(m_refusals.front(), &Node::refusals, -1);
            m_refusals.pop_front();
        }
        for (std::size_t i = refusals.size() - fresh; i < refusals.size(); ++i) {
            add(refusals[i].second, &Node::refusals, 1);
            m_refusals.push_back(refusals[i].second);
        }
    }
    // Release requests, few and short-lived, are listed anew (on their held resource's node).
    for (const QString &path : std::exchange(m_requested, {})) {
        if (Node *n = m_index.value(path)) {
            touch(*n);
            n->requests.clear();
            n->requestOverdue = false;
        }
    }
    if (const ConsoleFrame *f = state.frame()) {
        for (const ReleaseRequestInfo &r : f->snapshot.releaseRequests) {
            const QString path = QString::fromStdString(r.resource);
            Node *n = m_index.value(path);
            if (!n)
                continue;
            touch(*n);
            QString line =
                QStringLiteral("%1 asks %2 · %3 · %4 ago")
                    .arg(QString::fromStdString(r.requester), QString::fromStdString(r.holder),
                         QString::fromLatin1(urgencyName(r.urgency)),
                         formatDuration(std::max<std::int64_t>(0, f->snapshot.at - r.raisedAt)));
            if (r.overdue)
                line += QStringLiteral(" · overdue");
            n->requests << line;
            n->requestOverdue = n->requestOverdue || r.overdue;
            m_requested.push_back(path);
        }
    }
    std::erase_if(m_leases, [&](auto &entry) {
        if (entry.second.seen == now)
            return false;
        add(entry.second.resource, &Node::held, -1, &entry.second.holder);
        return true;
    });
    // What counts nothing any more goes; the largest contention is found again.
    m_changed |= std::erase_if(m_nodes, [this](const auto &entry) {
                     const Node &n = entry.second;
                     const bool idle = n.held + n.contention() == 0;
                     if (idle) {
                         m_before.erase(const_cast<Node *>(&n));
                         m_index.remove(entry.first);
                     }
                     return idle;
                 }) > 0;
    const int maxBefore = std::exchange(m_maxContention, 1);
    for (const auto &[path, n] : m_nodes)
        m_maxContention = std::max(m_maxContention, n.contention());
    bool moved = m_changed || m_maxContention != maxBefore;
    for (const auto &[node, was] : m_before)
        moved = moved || !(*node == was);
    m_before.clear();
    return moved;
}
