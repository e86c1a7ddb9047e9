// ResourceTrie: where entries live. Nodes are made on the way to a name, counted up to the
// root as entries come and go, indexed by extension in their parent, and removed a while after
// they empty (a bounded queue, never a sweep). The questions are in resourcetrie.cpp, the
// self-check in resourcetrie_checks.cpp.

#include "resourcetrie.h"
#include "resourcetrie_p.h"

namespace leasehold {

namespace {

template<class Adjust> void adjustUp(TrieNode *node, Adjust &&adjust)
{
    for (; node; node = node->parent)
        adjust(node);
}

} // namespace

TrieNode *ResourceTrie::ensure(const ResourceName &name)
{
    TrieNode *node = &m_root;
    const std::size_t n = name.key().size() + 1;
    const std::vector<std::size_t> &hashes = name.segmentHashes();
    for (std::size_t i = 0; i < n; ++i) {
        const std::string &segment = i == 0 ? name.scheme() : name.key()[i - 1];
        auto it = node->children.find(SegmentKey{segment, hashes[i]});
        if (it == node->children.end()) {
            auto child = std::make_unique<TrieNode>();
            child->parent = node;
            child->segment = segment;
            if (const auto extension = extensionOf(segment)) {
                auto &list = node->byExtension[std::string(*extension)];
                child->extensionSlot = list.size();
                list.push_back(child.get());
            }
            it = node->children.emplace(segment, std::move(child)).first;
            ++m_nodeCount;
        }
        node = it->second.get();
    }
    return node;
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
        if (const auto extension = extensionOf(oldest->segment)) {
            const auto list = parent->byExtension.find(*extension);
            TrieNode *last = list->second.back();
            list->second[oldest->extensionSlot] = last;
            last->extensionSlot = oldest->extensionSlot;
            list->second.pop_back();
            if (list->second.empty())
                parent->byExtension.erase(list);
        }
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
    node->parked.emplace(std::make_pair(waiter->ticket, index), waiter);
    const int c = classOf(waiter->exclusive[index]);
    adjustUp(node, [c](TrieNode *n) { ++n->subParked[c]; });
}

void ResourceTrie::removeParked(Waiter *waiter, std::size_t index)
{
    TrieNode *node = waiter->nodes[index];
    node->parked.erase(std::make_pair(waiter->ticket, index));
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

} // namespace leasehold
