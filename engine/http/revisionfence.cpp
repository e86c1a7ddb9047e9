#include "revisionfence.h"

namespace leasehold {

namespace {

constexpr const char *kAbsent = "absent";

std::string shortRevision(const std::string &revision)
{
    // "sha256-v1:" and 12 hex digits are enough for a person to tell two apart.
    return revision.size() > 22 ? revision.substr(0, 22) + "…" : revision;
}

} // namespace

RevisionFence::RevisionFence(std::size_t maxPathsPerAgent)
    : m_maxPaths(maxPathsPerAgent)
{}

void RevisionFence::observe(const std::string &agent, const std::string &path,
                            const std::string &revision)
{
    std::lock_guard lock(m_mutex);
    auto &seen = m_seen[agent];
    if (seen.size() >= m_maxPaths && !seen.count(path))
        seen.erase(seen.begin()); // fails closed: that path must be read again
    seen[path] = revision.empty() ? kAbsent : revision;
}

void RevisionFence::forget(const std::string &agent, const std::string &path)
{
    std::lock_guard lock(m_mutex);
    auto it = m_seen.find(agent);
    if (it != m_seen.end())
        it->second.erase(path);
}

std::string RevisionFence::check(const std::string &agent, const std::string &path,
                                 const std::string &current) const
{
    std::lock_guard lock(m_mutex);
    const std::string *seen = nullptr;
    if (auto a = m_seen.find(agent); a != m_seen.end()) {
        if (auto p = a->second.find(path); p != a->second.end())
            seen = &p->second;
    }
    if (current.empty()) {
        if (seen && *seen != kAbsent)
            return path + " was deleted or moved since you last read it; check with fs_stat "
                          "before you recreate it";
        return {};
    }
    if (!seen || *seen == kAbsent)
        return path + " exists but you have not read it (no blind overwrite): fs_read it, then "
                      "make your change";
    if (*seen != current)
        return path + " changed since you last read it (you saw " + shortRevision(*seen) +
               ", it is now " + shortRevision(current) +
               "): fs_read it again and redo your change on the new content";
    return {};
}

} // namespace leasehold
