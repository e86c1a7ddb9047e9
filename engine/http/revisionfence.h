#pragma once

#include <cstddef>
#include <mutex>
#include <string>
#include <unordered_map>

namespace leasehold {

// The stale-write fence: per agent and path, the last revision that agent observed (by reading,
// stating or listing it, or by its own successful write). A mutation is allowed only when the
// target is as the agent last saw it: unchanged, or absent and never seen to exist. A target
// that exists but was never observed is refused too, so nothing is overwritten blind.
//
// Memory is bounded per agent; a forgotten entry fails closed (the agent is asked to read
// again), never open.
//
// Thread-safe: the workspace tools' workers observe and check from their own threads.
class RevisionFence
{
public:
    explicit RevisionFence(std::size_t maxPathsPerAgent = 65'536);

    // `revision` empty: the agent saw that `path` does not exist.
    void observe(const std::string &agent, const std::string &path, const std::string &revision);
    void forget(const std::string &agent, const std::string &path);
    // Why `agent` may not change `path`, whose revision now is `current` (empty: it does not
    // exist); empty when it may. The sentence says what changed and what to do.
    std::string check(const std::string &agent, const std::string &path,
                      const std::string &current) const;

private:
    std::size_t m_maxPaths;
    mutable std::mutex m_mutex;
    std::unordered_map<std::string, std::unordered_map<std::string, std::string>> m_seen;
};

} // namespace leasehold
