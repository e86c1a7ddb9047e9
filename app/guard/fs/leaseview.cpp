#include "leaseview.h"

#include <mutex>

using leasehold::ResourceName;

LeaseView::LeaseView(std::string self)
    : m_self(std::move(self))
{}

void LeaseView::setSelf(const std::string &self)
{
    std::unique_lock lock(m_lock);
    m_self = self;
}

std::string LeaseView::self() const
{
    std::shared_lock lock(m_lock);
    return m_self;
}

void LeaseView::replace(std::vector<Lease> leases)
{
    std::unique_lock lock(m_lock);
    m_byId.clear();
    m_plain.clear();
    m_patterns.clear();
    for (Lease &l : leases)
        insert(std::move(l));
}

void LeaseView::granted(Lease lease)
{
    std::unique_lock lock(m_lock);
    erase(lease.leaseId);
    insert(std::move(lease));
}

void LeaseView::ended(const std::string &leaseId)
{
    std::unique_lock lock(m_lock);
    erase(leaseId);
}

std::size_t LeaseView::size() const
{
    std::shared_lock lock(m_lock);
    return m_byId.size();
}

void LeaseView::insert(Lease lease)
{
    if (!lease.name.isWorkspacePath())
        return;
    const std::string id = lease.leaseId;
    if (lease.name.isPattern())
        m_patterns.emplace(id, id);
    else
        m_plain.emplace(lease.name.path(), id);
    m_byId.emplace(id, std::move(lease));
}

void LeaseView::erase(const std::string &leaseId)
{
    auto it = m_byId.find(leaseId);
    if (it == m_byId.end())
        return;
    if (it->second.name.isPattern()) {
        m_patterns.erase(leaseId);
    } else {
        auto [from, to] = m_plain.equal_range(it->second.name.path());
        for (auto p = from; p != to; ++p) {
            if (p->second == leaseId) {
                m_plain.erase(p);
                break;
            }
        }
    }
    m_byId.erase(it);
}

bool LeaseView::blocks(const Lease &lease, const ResourceName &name, bool subtree,
                       bool &ownCover) const
{
    // A file has nothing below it; a folder that moves or goes takes everything below it.
    const bool inWay = subtree ? lease.name.overlaps(name) : lease.name.covers(name);
    if (!inWay)
        return false;
    if (lease.holder != m_self)
        return true;
    ownCover = ownCover || (lease.mode != "read" && lease.name.covers(name));
    return false;
}

LeaseView::Verdict LeaseView::judge(const ResourceName &name, bool subtree) const
{
    std::shared_lock lock(m_lock);
    Verdict verdict;
    auto consider = [&](const std::string &leaseId) {
        const Lease &lease = m_byId.at(leaseId);
        if (blocks(lease, name, subtree, verdict.ownCover) && !verdict.blocker)
            verdict.blocker = lease;
    };
    // The name and every folder above it: one lookup each.
    const Path &path = name.path();
    Path prefix;
    prefix.reserve(path.size());
    for (std::size_t depth = 0; depth <= path.size() && !verdict.blocker; ++depth) {
        auto [from, to] = m_plain.equal_range(prefix);
        for (auto it = from; it != to; ++it)
            consider(it->second);
        if (depth < path.size())
            prefix.push_back(path[depth]);
    }
    // Below it, for a folder: the names that start with its segments sit together.
    if (subtree && !verdict.blocker) {
        for (auto it = m_plain.upper_bound(path); it != m_plain.end(); ++it) {
            const Path &p = it->first;
            if (p.size() <= path.size() || !std::equal(path.begin(), path.end(), p.begin()))
                break;
            consider(it->second);
            if (verdict.blocker)
                break;
        }
    }
    for (auto it = m_patterns.begin(); it != m_patterns.end() && !verdict.blocker; ++it)
        consider(it->second);
    return verdict;
}
