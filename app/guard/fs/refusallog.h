#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace leasehold::fsgate {

// One change the gate refused, as `leasehold why` and the hooks' post-tool reports tell it.
struct Refusal
{
    std::int64_t at = 0;      // ms since the epoch
    std::string op;           // changeOpName
    std::string path;         // below the root
    std::string resource;     // the name judged (canonical)
    std::string reason;       // "lease_held", or "unreachable" (the view was not current)
    std::string holder;       // lease_held: who holds it
    std::string heldResource; // the lease's own name (a folder above, a pattern)
    std::string leaseId;
    std::int64_t grantedAt = 0;
    std::int64_t expiresAt = 0;
    int pid = 0;
    std::string command;
};

// The run's refusals, one JSON object per line in a file the run's processes can read (the
// run's folder, LEASEHOLD_RUN). Appends are whole lines (O_APPEND); the file is bounded: past
// `maxBytes` it starts again, keeping the newest half. Thread-safe.
class RefusalLog
{
public:
    // An empty path keeps nothing (a test's gate, or a setup without a run folder).
    explicit RefusalLog(std::string path, std::size_t maxBytes = 1 << 20);
    ~RefusalLog();
    RefusalLog(const RefusalLog &) = delete;
    RefusalLog &operator=(const RefusalLog &) = delete;

    void append(const Refusal &refusal);
    const std::string &path() const { return m_path; }

    // The refusals in `path`'s file at or after `since` (ms), oldest first; the malformed lines
    // of a file cut short are skipped.
    static std::vector<Refusal> read(const std::string &path, std::int64_t since = 0);
    static std::string toLine(const Refusal &refusal);
    static bool fromLine(const std::string &line, Refusal *refusal);

private:
    std::string m_path;
    std::size_t m_maxBytes;
    std::mutex m_lock;
    int m_fd = -1;
};

} // namespace leasehold::fsgate
