#include "resourcetrie.h"

namespace leasehold {

namespace {

inline int classOf(bool exclusive)
{
    return exclusive ? 1 : 0;
}

inline bool leaseConflicts(const LeaseRecord *l, bool exclusive, const AgentRecord *self)
{
    return (l->exclusive || exclusive) && (l->agent != self || l->pending.has_value());
}

// Calls step(node) for each existing node on the path of `name` (scheme node first); stops
// when a node is missing or step returns false. Returns the deepest node reached when the whole
// path exists, else nullptr.
template<class Step>
const TrieNode *walkPath(const TrieNode &root, const ResourceName &name, Step &&step)
{
    const TrieNode *node = &root;
    const std::size_t n = name.path().size() + 1;
    const std::vector<std::size_t> &hashes = name.segmentHashes();
    for (std::size_t i = 0; i < n; ++i) {
        const std::string &segment = i == 0 ? name.scheme() : name.path()[i - 1];
        auto it = node->children.find(SegmentKey{segment, hashes[i]});
        if (it == node->children.end())
            return nullptr;
        node = it->second.get();
        if (!step(node))
            return nullptr;
    }
    return node;
}

template<class Visit>
bool visitLeaseSubtree(const TrieNode *node, bool exclusive, const AgentRecord *self, Visit &visit)
{
    for (const auto &entry : node->children) {
        const TrieNode *child = entry.second.get();
        const std::uint32_t relevant =
            exclusive ? child->subLeases[0] + child->subLeases[1] : child->subLeases[1];
        if (relevant == 0)
            continue;
        for (LeaseRecord *l : child->leases) {
            if (leaseConflicts(l, exclusive, self) && !visit(l))
                return false;
        }
        if (!visitLeaseSubtree(child, exclusive, self, visit))
            return false;
    }
    return true;
}

template<class Visit>
void visitLeaseConflicts(const TrieNode &root, const ResourceName &name, bool exclusive,
                         const AgentRecord *self, Visit &&visit)
{
    bool go = true;
    const TrieNode *node = walkPath(root, name, [&](const TrieNode *n) {
        for (LeaseRecord *l : n->leases) {
            if (leaseConflicts(l, exclusive, self) && !visit(l))
                return go = false;
        }
        return true;
    });
    if (go && node)
        visitLeaseSubtree(node, exclusive, self, visit);
}

bool entryIsExclusive(const Waiter *w, const TrieNode *node)
{
    for (std::size_t i = 0; i < w->nodes.size(); ++i) {
        if (w->nodes[i] == node)
            return w->exclusive[i];
    }
    return false;
}

template<class Visit>
bool visitParkedAt(const TrieNode *node, bool exclusive, std::uint64_t before, Visit &visit)
{
    for (const auto &[ticket, waiter] : node->parked) {
        if (ticket >= before)
            break;
        if ((entryIsExclusive(waiter, node) || exclusive) && !visit(waiter))
            return false;
    }
    return true;
}

// The direct blockers at one node, newest first (see forEachParkedBlocker).
template<class Visit>
bool visitBlockersAt(const TrieNode *node, bool exclusive, std::uint64_t before,
                     const AgentRecord *self, Visit &visit)
{
    auto it = node->parked.lower_bound(before);
    while (it != node->parked.begin()) {
        --it;
        if (it->second->agent == self)
            continue;
        const bool entryExclusive = entryIsExclusive(it->second, node);
        if ((entryExclusive || exclusive) && !visit(it->second))
            return false;
        if (entryExclusive)
            break;
    }
    return true;
}

// Calls atNode(node) for every node on the path of `name` and below it that holds parked
// entries which may conflict with a claim of this class; stops when atNode returns false.
template<class AtNode> bool forParkedBelow(const TrieNode *node, bool exclusive, AtNode &atNode)
{
    for (const auto &entry : node->children) {
        const TrieNode *child = entry.second.get();
        const std::uint32_t relevant =
            exclusive ? child->subParked[0] + child->subParked[1] : child->subParked[1];
        if (relevant == 0)
            continue;
        if (!atNode(child) || !forParkedBelow(child, exclusive, atNode))
            return false;
    }
    return true;
}

template<class AtNode>
void forParkedNodes(const TrieNode &root, const ResourceName &name, bool exclusive, AtNode &&atNode)
{
    bool go = true;
    const TrieNode *node = walkPath(root, name, [&](const TrieNode *n) {
        if (!n->parked.empty() && !atNode(n))
            return go = false;
        return true;
    });
    if (go && node)
        forParkedBelow(node, exclusive, atNode);
}

bool wantConflictAt(const TrieNode *node, bool exclusive, const AgentRecord *self)
{
    for (const WantRecord *w : node->wants) {
        if (w->agent != self && (w->exclusive || exclusive))
            return true;
    }
    return false;
}

bool wantConflictBelow(const TrieNode *node, bool exclusive, const AgentRecord *self)
{
    for (const auto &entry : node->children) {
        const TrieNode *child = entry.second.get();
        if (child->subWants == 0)
            continue;
        if (wantConflictAt(child, exclusive, self) || wantConflictBelow(child, exclusive, self))
            return true;
    }
    return false;
}

void collectParkedBelow(const TrieNode *node, std::vector<TrieNode *> &out)
{
    for (const auto &entry : node->children) {
        TrieNode *child = entry.second.get();
        if (child->subParked[0] + child->subParked[1] == 0)
            continue;
        if (!child->parked.empty())
            out.push_back(child);
        collectParkedBelow(child, out);
    }
}

template<class Adjust> void adjustUp(TrieNode *node, Adjust &&adjust)
{
    for (; node; node = node->parent)
        adjust(node);
}

} // namespace

TrieNode *ResourceTrie::ensure(const ResourceName &name)
{
    TrieNode *node = &m_root;
    const std::size_t n = name.path().size() + 1;
    const std::vector<std::size_t> &hashes = name.segmentHashes();
    for (std::size_t i = 0; i < n; ++i) {
        const std::string &segment = i == 0 ? name.scheme() : name.path()[i - 1];
        auto it = node->children.find(SegmentKey{segment, hashes[i]});
        if (it == node->children.end()) {
            auto child = std::make_unique<TrieNode>();
            child->parent = node;
            child->segment = segment;
            it = node->children.emplace(segment, std::move(child)).first;
            ++m_nodeCount;
        }
        node = it->second.get();
    }
    return node;
}

TrieNode *ResourceTrie::find(const ResourceName &name) const
{
    return const_cast<TrieNode *>(walkPath(m_root, name, [](const TrieNode *) { return true; }));
}

void ResourceTrie::prune(TrieNode *node)
{
    // Emptied nodes wait in a bounded FIFO before they are removed: a name locked and unlocked
    // in a loop keeps its node, and removal costs O(1) per node, never a sweep of the trie.
    if (node == &m_root || !node->idle() || node->idleQueued)
        return;
    node->idleQueued = true;
    m_idle.push_back(node);
    while (m_idle.size() > kIdleCap) {
        TrieNode *oldest = m_idle.front();
        m_idle.pop_front();
        oldest->idleQueued = false;
        if (!oldest->idle())
            continue;
        TrieNode *parent = oldest->parent;
        parent->children.erase(oldest->segment); // destroys `oldest`
        --m_nodeCount;
        if (parent != &m_root && parent->idle() && !parent->idleQueued) {
            parent->idleQueued = true;
            m_idle.push_back(parent);
        }
    }
}

void ResourceTrie::addLease(LeaseRecord *lease)
{
    TrieNode *node = ensure(lease->resource);
    lease->node = node;
    lease->nodeSlot = node->leases.size();
    node->leases.push_back(lease);
    const int c = classOf(lease->exclusive);
    adjustUp(node, [c](TrieNode *n) { ++n->subLeases[c]; });
}

void ResourceTrie::removeLease(LeaseRecord *lease)
{
    TrieNode *node = lease->node;
    LeaseRecord *last = node->leases.back();
    node->leases[lease->nodeSlot] = last;
    last->nodeSlot = lease->nodeSlot;
    node->leases.pop_back();
    const int c = classOf(lease->exclusive);
    adjustUp(node, [c](TrieNode *n) { --n->subLeases[c]; });
    lease->node = nullptr;
    prune(node);
}

void ResourceTrie::addParked(Waiter *waiter, std::size_t index)
{
    TrieNode *node = ensure(waiter->resources[index]);
    waiter->nodes[index] = node;
    node->parked.emplace(waiter->ticket, waiter);
    const int c = classOf(waiter->exclusive[index]);
    adjustUp(node, [c](TrieNode *n) { ++n->subParked[c]; });
}

void ResourceTrie::removeParked(Waiter *waiter, std::size_t index)
{
    TrieNode *node = waiter->nodes[index];
    node->parked.erase(waiter->ticket);
    const int c = classOf(waiter->exclusive[index]);
    adjustUp(node, [c](TrieNode *n) { --n->subParked[c]; });
    waiter->nodes[index] = nullptr;
    prune(node);
}

void ResourceTrie::addWant(WantRecord *want)
{
    TrieNode *node = ensure(want->resource);
    want->node = node;
    want->nodeSlot = node->wants.size();
    node->wants.push_back(want);
    adjustUp(node, [](TrieNode *n) { ++n->subWants; });
}

void ResourceTrie::removeWant(WantRecord *want)
{
    TrieNode *node = want->node;
    WantRecord *last = node->wants.back();
    node->wants[want->nodeSlot] = last;
    last->nodeSlot = want->nodeSlot;
    node->wants.pop_back();
    adjustUp(node, [](TrieNode *n) { --n->subWants; });
    want->node = nullptr;
    prune(node);
}

void ResourceTrie::forEachLeaseConflict(const ResourceName &name, bool exclusive,
                                        const AgentRecord *self,
                                        FunctionRef<bool(LeaseRecord *)> visit) const
{
    visitLeaseConflicts(m_root, name, exclusive, self, visit);
}

LeaseRecord *ResourceTrie::firstLeaseConflict(const ResourceName &name, bool exclusive,
                                              const AgentRecord *self) const
{
    LeaseRecord *found = nullptr;
    visitLeaseConflicts(m_root, name, exclusive, self, [&found](LeaseRecord *l) {
        found = l;
        return false;
    });
    return found;
}

void ResourceTrie::forEachParkedConflict(const ResourceName &name, bool exclusive,
                                         std::uint64_t beforeTicket,
                                         FunctionRef<bool(Waiter *)> visit) const
{
    forParkedNodes(m_root, name, exclusive, [&](const TrieNode *n) {
        return visitParkedAt(n, exclusive, beforeTicket, visit);
    });
}

Waiter *ResourceTrie::firstParkedConflict(const ResourceName &name, bool exclusive,
                                          std::uint64_t beforeTicket) const
{
    Waiter *found = nullptr;
    auto first = [&found](Waiter *w) {
        found = w;
        return false;
    };
    forParkedNodes(m_root, name, exclusive, [&](const TrieNode *n) {
        return visitParkedAt(n, exclusive, beforeTicket, first);
    });
    return found;
}

const std::vector<LeaseRecord *> *ResourceTrie::leasesAt(const ResourceName &name) const
{
    const TrieNode *node = find(name);
    return node && !node->leases.empty() ? &node->leases : nullptr;
}

void ResourceTrie::forEachParkedBlocker(const ResourceName &name, bool exclusive,
                                        std::uint64_t beforeTicket, const AgentRecord *self,
                                        FunctionRef<bool(Waiter *)> visit) const
{
    forParkedNodes(m_root, name, exclusive, [&](const TrieNode *n) {
        return visitBlockersAt(n, exclusive, beforeTicket, self, visit);
    });
}

int ResourceTrie::waitersAt(const ResourceName &name) const
{
    const TrieNode *node = find(name);
    return node ? static_cast<int>(node->parked.size() + node->wants.size()) : 0;
}

bool ResourceTrie::anyWantConflict(const ResourceName &name, bool exclusive,
                                   const AgentRecord *self) const
{
    bool found = false;
    const TrieNode *node = walkPath(m_root, name, [&](const TrieNode *n) {
        found = found || wantConflictAt(n, exclusive, self);
        return !found;
    });
    return found || (node && wantConflictBelow(node, exclusive, self));
}

void ResourceTrie::collectQueues(const ResourceName &name, std::vector<TrieNode *> &out) const
{
    const TrieNode *node = walkPath(m_root, name, [&out](const TrieNode *n) {
        if (!n->parked.empty())
            out.push_back(const_cast<TrieNode *>(n));
        return true;
    });
    if (node)
        collectParkedBelow(node, out);
}

namespace {

std::size_t countNodes(const TrieNode &node)
{
    std::size_t n = 1;
    for (const auto &entry : node.children)
        n += countNodes(*entry.second);
    return n;
}

bool checkNode(const TrieNode &node, std::array<std::uint32_t, 2> &leases,
               std::array<std::uint32_t, 2> &parked, std::uint32_t &wants)
{
    std::array<std::uint32_t, 2> myLeases{};
    std::array<std::uint32_t, 2> myParked{};
    std::uint32_t myWants = static_cast<std::uint32_t>(node.wants.size());
    for (std::size_t i = 0; i < node.leases.size(); ++i) {
        const LeaseRecord *l = node.leases[i];
        if (l->node != &node || l->nodeSlot != i)
            return false;
        ++myLeases[classOf(l->exclusive)];
    }
    for (const auto &[ticket, w] : node.parked) {
        bool found = false;
        for (std::size_t i = 0; i < w->nodes.size(); ++i) {
            if (w->nodes[i] == &node) {
                found = true;
                ++myParked[classOf(w->exclusive[i])];
            }
        }
        if (!found || w->ticket != ticket)
            return false;
    }
    for (const auto &entry : node.children) {
        if (entry.second->parent != &node)
            return false;
        if (!checkNode(*entry.second, myLeases, myParked, myWants))
            return false;
    }
    if (myLeases != node.subLeases || myParked != node.subParked || myWants != node.subWants)
        return false;
    for (int c = 0; c < 2; ++c) {
        leases[c] += myLeases[c];
        parked[c] += myParked[c];
    }
    wants += myWants;
    return true;
}

} // namespace

std::size_t ResourceTrie::nodeCount() const
{
    return countNodes(m_root) - 1;
}

bool ResourceTrie::isConsistent() const
{
    std::array<std::uint32_t, 2> leases{};
    std::array<std::uint32_t, 2> parked{};
    std::uint32_t wants = 0;
    if (countNodes(m_root) - 1 != m_nodeCount)
        return false;
    for (const auto &entry : m_root.children) {
        if (!checkNode(*entry.second, leases, parked, wants))
            return false;
    }
    return true;
}

} // namespace leasehold
