// ResourceTrie: its self-check (the engine's invariant check and the tests call it): every
// node's subtree totals recomputed from its entries, and the node count.

#include "resourcetrie.h"
#include "resourcetrie_p.h"

namespace leasehold {

namespace {

std::size_t countNodes(const TrieNode &node)
{
    std::size_t n = 1;
    for (const auto &entry : node.children)
        n += countNodes(*entry.second);
    return n;
}

struct SubtreeCounts
{
    std::array<std::uint32_t, 2> leases{};
    std::array<std::uint32_t, 2> parked{};
    std::uint32_t wants = 0;
};

bool checkNode(const TrieNode &node, SubtreeCounts &total)
{
    SubtreeCounts mine;
    mine.wants = static_cast<std::uint32_t>(node.wants.size());
    for (std::size_t i = 0; i < node.leases.size(); ++i) {
        const LeaseRecord *l = node.leases[i];
        if (l->node != &node || l->nodeSlot != i)
            return false;
        ++mine.leases[classOf(l->exclusive)];
    }
    for (const auto &[key, w] : node.parked) {
        if (key.second >= w->nodes.size() || w->nodes[key.second] != &node ||
            w->ticket != key.first)
            return false;
        ++mine.parked[classOf(w->exclusive[key.second])];
    }
    // The extension index lists exactly the children with a '.', each at its own slot.
    std::size_t indexed = 0;
    for (const auto &[extension, list] : node.byExtension) {
        if (list.empty())
            return false;
        for (std::size_t i = 0; i < list.size(); ++i) {
            const TrieNode *child = list[i];
            if (child->parent != &node || child->extensionSlot != i ||
                extensionOf(child->segment) != std::string_view(extension))
                return false;
        }
        indexed += list.size();
    }
    std::size_t dotted = 0;
    for (const auto &entry : node.children) {
        if (entry.second->parent != &node)
            return false;
        dotted += extensionOf(entry.first).has_value();
        if (!checkNode(*entry.second, mine))
            return false;
    }
    if (dotted != indexed)
        return false;
    if (mine.leases != node.subLeases || mine.parked != node.subParked ||
        mine.wants != node.subWants)
        return false;
    for (int c = 0; c < 2; ++c) {
        total.leases[c] += mine.leases[c];
        total.parked[c] += mine.parked[c];
    }
    total.wants += mine.wants;
    return true;
}

} // namespace

std::size_t ResourceTrie::nodeCount() const
{
    return countNodes(m_root) - 1;
}

bool ResourceTrie::isConsistent() const
{
    SubtreeCounts total;
    if (countNodes(m_root) - 1 != m_nodeCount)
        return false;
    for (const auto &entry : m_root.children) {
        if (!checkNode(*entry.second, total))
            return false;
    }
    return true;
}

} // namespace leasehold
