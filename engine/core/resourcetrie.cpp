// ResourceTrie: the questions (which leases, parked waiters and wants a claim meets), each a walk
// of the path of the name and of only the parts of its subtree where something may conflict.
// Nodes and their counts are kept in resourcetrie_nodes.cpp.

#include "resourcetrie.h"
#include "resourcetrie_p.h"

namespace leasehold {

namespace {

// Entries in `counts` (a subtree total: [shared, exclusive]) that a claim of this class can
// conflict with: any for an exclusive claim, only exclusive ones for a shared claim.
inline std::uint32_t relevant(const std::array<std::uint32_t, 2> &counts, bool exclusive)
{
    return exclusive ? counts[0] + counts[1] : counts[1];
}

inline bool leaseConflicts(const LeaseRecord *l, bool exclusive, const AgentRecord *self)
{
    // A name held back (lock-delay) is taken from everyone, its last holder too.
    return (l->exclusive || exclusive) &&
           (l->agent != self || l->pending.has_value() || l->heldBackUntil > 0);
}

// Whether an entry for `entry`, found on the way to `query` or below it, names something the
// question does: always for two plain names (their places in the trie say so), decided exactly
// when either is a pattern.
inline bool meets(const ResourceName &entry, const ResourceName &query)
{
    return (!entry.isPattern() && !query.isPattern()) || entry.overlaps(query);
}

inline const ResourceName &entryName(const std::pair<std::uint64_t, std::size_t> &key,
                                     const Waiter *w)
{
    return w->resources[key.second];
}

// Calls step(node) for each existing node on the path of `name` (scheme node first); stops
// when a node is missing or step returns false. Returns the deepest node reached when the whole
// path exists, else nullptr.
template<class Step>
const TrieNode *walkPath(const TrieNode &root, const ResourceName &name, Step &&step)
{
    const TrieNode *node = &root;
    const std::size_t n = name.key().size() + 1;
    const std::vector<std::size_t> &hashes = name.segmentHashes();
    for (std::size_t i = 0; i < n; ++i) {
        const std::string &segment = i == 0 ? name.scheme() : name.key()[i - 1];
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
bool visitLeaseSubtree(const TrieNode *node, const ResourceName &query, bool exclusive,
                       const AgentRecord *self, Visit &visit)
{
    for (const auto &entry : node->children) {
        const TrieNode *child = entry.second.get();
        if (relevant(child->subLeases, exclusive) == 0)
            continue;
        for (LeaseRecord *l : child->leases) {
            if (leaseConflicts(l, exclusive, self) && meets(l->resource, query) && !visit(l))
                return false;
        }
        if (!visitLeaseSubtree(child, query, exclusive, self, visit))
            return false;
    }
    return true;
}

// The one literal segment every live position of `at` reads next, when there is one: then
// only the child of that name can be reached, and it is looked up instead of every child read.
const std::string *onlyLiteralNext(const PathPattern &pattern, const PathPattern::Positions &at)
{
    const std::string *literal = nullptr;
    const auto &segments = pattern.segments();
    for (std::size_t k = at._Find_first(); k < at.size(); k = at._Find_next(k)) {
        if (k >= segments.size() || !segments[k].literal)
            return nullptr; // a match, a `**` or a wildcard segment: any child may continue it
        if (literal && *literal != *segments[k].literal)
            return nullptr;
        literal = &*segments[k].literal;
    }
    return literal;
}

// Likewise the one extension every live position's glob fixes (`*.ts`), when there is one: then
// only the children with that extension can continue a match.
const std::string *onlyExtensionNext(const PathPattern &pattern, const PathPattern::Positions &at)
{
    const std::string *extension = nullptr;
    const auto &segments = pattern.segments();
    for (std::size_t k = at._Find_first(); k < at.size(); k = at._Find_next(k)) {
        if (k >= segments.size() || !segments[k].extension)
            return nullptr;
        if (extension && *extension != *segments[k].extension)
            return nullptr;
        extension = &*segments[k].extension;
    }
    return extension;
}

// The subtree below a pattern's literal prefix, read with the pattern's automaton: `at` holds
// its positions after the node's name, `covered` whether that name or one above it matched. A
// plain lease collides when covered, or when a match can still lie at or below it (a position
// is alive). A branch where neither holds is skipped whole: no name in it or below it matches,
// and no name above it did, so no lease there collides, a pattern lease included (all its
// names lie in the branch).
template<class Visit>
bool visitPatternSubtree(const TrieNode *node, const ResourceName &query,
                         const PathPattern::Positions &at, bool covered, bool exclusive,
                         const AgentRecord *self, Visit &visit)
{
    const PathPattern &pattern = *query.pattern();
    // One branch: true to go on.
    auto branch = [&](std::string_view segment, const TrieNode *child) {
        const PathPattern::Positions next =
            covered ? PathPattern::Positions() : pattern.advance(at, segment);
        const bool childCovered = covered || pattern.accepts(next);
        const bool plainMeets = childCovered || next.any();
        if (!plainMeets || relevant(child->subLeases, exclusive) == 0)
            return true;
        for (LeaseRecord *l : child->leases) {
            if (!leaseConflicts(l, exclusive, self))
                continue;
            const bool hit = l->resource.isPattern() ? l->resource.overlaps(query) : plainMeets;
            if (hit && !visit(l))
                return false;
        }
        return visitPatternSubtree(child, query, next, childCovered, exclusive, self, visit);
    };
    if (const std::string *literal = covered ? nullptr : onlyLiteralNext(pattern, at)) {
        // `repo/*/dir7/*.ts` below `repo/42`: dir7 alone, not each of repo/42's folders.
        const auto it = node->children.find(std::string_view(*literal));
        return it == node->children.end() || branch(it->first, it->second.get());
    }
    if (const std::string *extension = covered ? nullptr : onlyExtensionNext(pattern, at)) {
        // `*.ts` in a folder of ten thousand `.cpp` files: none of them is read.
        const auto it = node->byExtension.find(std::string_view(*extension));
        if (it == node->byExtension.end())
            return true;
        for (const TrieNode *child : it->second)
            if (!branch(child->segment, child))
                return false;
        return true;
    }
    for (const auto &entry : node->children) {
        // The segment first (it sits in the map's own node): most branches end there, without
        // a read of the child.
        if (!branch(entry.first, entry.second.get()))
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
            if (leaseConflicts(l, exclusive, self) && meets(l->resource, name) && !visit(l))
                return go = false;
        }
        return true;
    });
    if (!go || !node)
        return;
    if (!name.isPattern()) {
        visitLeaseSubtree(node, name, exclusive, self, visit);
        return;
    }
    // The automaton's positions at the literal prefix (which it reads as written).
    const PathPattern &pattern = *name.pattern();
    PathPattern::Positions at = pattern.start();
    bool covered = pattern.accepts(at);
    for (const std::string &segment : pattern.literalPrefix()) {
        at = pattern.advance(at, segment);
        covered = covered || pattern.accepts(at);
    }
    visitPatternSubtree(node, name, at, covered, exclusive, self, visit);
}

template<class Visit>
bool visitParkedAt(const TrieNode *node, const ResourceName &query, bool exclusive,
                   std::uint64_t before, Visit &visit)
{
    for (const auto &[key, waiter] : node->parked) {
        if (key.first >= before)
            break;
        if ((waiter->exclusive[key.second] || exclusive) && meets(entryName(key, waiter), query) &&
            !visit(waiter))
            return false;
    }
    return true;
}

// The direct blockers at one node, newest first (see forEachParkedBlocker). Behind an exclusive
// entry of a plain name nothing earlier at the node needs a visit: that entry overlaps every
// entry there and waits for them all. An exclusive pattern entry does not (two patterns on one
// node may name different things), so the scan goes on past it.
template<class Visit>
bool visitBlockersAt(const TrieNode *node, const ResourceName &query, bool exclusive,
                     std::uint64_t before, const AgentRecord *self, Visit &visit)
{
    auto it = node->parked.lower_bound({before, 0});
    while (it != node->parked.begin()) {
        --it;
        const auto &[key, waiter] = *it;
        if (waiter->agent == self)
            continue;
        const ResourceName &name = entryName(key, waiter);
        const bool entryExclusive = waiter->exclusive[key.second];
        if ((entryExclusive || exclusive) && meets(name, query) && !visit(waiter))
            return false;
        if (entryExclusive && !name.isPattern() && meets(name, query))
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
        if (relevant(child->subParked, exclusive) == 0)
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

bool wantConflictAt(const TrieNode *node, const ResourceName &query, bool exclusive,
                    const AgentRecord *self)
{
    for (const WantRecord *w : node->wants) {
        if (w->agent != self && (w->exclusive || exclusive) && meets(w->resource, query))
            return true;
    }
    return false;
}

bool wantConflictBelow(const TrieNode *node, const ResourceName &query, bool exclusive,
                       const AgentRecord *self)
{
    for (const auto &entry : node->children) {
        const TrieNode *child = entry.second.get();
        if (child->subWants == 0)
            continue;
        if (wantConflictAt(child, query, exclusive, self) ||
            wantConflictBelow(child, query, exclusive, self))
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

} // namespace

TrieNode *ResourceTrie::find(const ResourceName &name) const
{
    return const_cast<TrieNode *>(walkPath(m_root, name, [](const TrieNode *) { return true; }));
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
        return visitParkedAt(n, name, exclusive, beforeTicket, visit);
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
        return visitParkedAt(n, name, exclusive, beforeTicket, first);
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
        return visitBlockersAt(n, name, exclusive, beforeTicket, self, visit);
    });
}

int ResourceTrie::waitersAt(const ResourceName &name) const
{
    const TrieNode *node = find(name);
    if (!node)
        return 0;
    int n = 0; // entries on exactly `name`: the node also holds patterns of its literal prefix
    for (const auto &[key, waiter] : node->parked)
        n += entryName(key, waiter) == name;
    for (const WantRecord *want : node->wants)
        n += want->resource == name;
    return n;
}

bool ResourceTrie::anyWantConflict(const ResourceName &name, bool exclusive,
                                   const AgentRecord *self) const
{
    bool found = false;
    const TrieNode *node = walkPath(m_root, name, [&](const TrieNode *n) {
        found = found || wantConflictAt(n, name, exclusive, self);
        return !found;
    });
    return found || (node && wantConflictBelow(node, name, exclusive, self));
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

} // namespace leasehold
