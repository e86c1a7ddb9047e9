// The filesystem gate for tests/bench/fs/run.sh: a GateFs with a policy that allows everything
// but does what a real one does on every call (a mutex and hash lookups of the path and of each
// folder above it, against a table of a few thousand leases). Prints "mounted" when serving;
// SIGTERM stops it.
//
//   gatefs_harness --backing DIR --mount DIR [--bus DIR|-] [--threads N] [--timeout SECONDS]
//                  [--no-readdirplus] [--no-cache-readdir] [--splice] [--handles]
//                  [--single-fd] [--parallel-dirops] [--max-watches N] [--no-default-permissions]
//
// --handles: zeroOpen off (an open and a release round trip per file opened).

#include "gatefs.h"
#include "gatepolicy.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>

using namespace leasehold::fsgate;

namespace {

GateFs *g_gate = nullptr;

void onSignal(int)
{
    if (g_gate)
        g_gate->stop();
}

class BusyAllowPolicy : public GatePolicy
{
public:
    BusyAllowPolicy()
    {
        for (int i = 0; i < 4096; ++i)
            m_leases.emplace("elsewhere/agent" + std::to_string(i) + "/file.cpp", i);
    }
    int admit(const Change &c) override
    {
        std::lock_guard lock(m_mutex);
        int held = 0;
        held += m_leases.count(c.path) != 0;
        for (std::size_t at = c.path.find('/'); at != std::string::npos;
             at = c.path.find('/', at + 1))
            held += m_leases.count(c.path.substr(0, at)) != 0;
        if (!c.target.empty())
            held += m_leases.count(c.target) != 0;
        m_asked += 1 + held;
        return 0;
    }
    void done(const Change &, int) override { m_done.fetch_add(1, std::memory_order_relaxed); }
    void closed(std::uint64_t) override {}
    std::uint64_t asked() const { return m_asked; }

private:
    std::mutex m_mutex;
    std::unordered_map<std::string, int> m_leases;
    std::uint64_t m_asked = 0;
    std::atomic<std::uint64_t> m_done{0};
};

} // namespace

int main(int argc, char **argv)
{
    GateFs::Options options;
    std::string backing;
    for (int i = 1; i < argc; ++i) {
        const std::string key = argv[i];
        const char *value = i + 1 < argc ? argv[i + 1] : "";
        if (key == "--backing")
            backing = value, ++i;
        else if (key == "--mount")
            options.mountPoint = value, ++i;
        else if (key == "--bus")
            options.busDirectory = value, ++i;
        else if (key == "--threads")
            options.threads = std::atoi(value), ++i;
        else if (key == "--timeout")
            options.attrTimeout = options.entryTimeout = options.negativeTimeout = std::atof(value),
            ++i;
        else if (key == "--no-readdirplus")
            options.readdirPlus = false;
        else if (key == "--plus-always")
            options.readdirPlusAuto = false;
        else if (key == "--no-cache-readdir")
            options.cacheReaddir = false;
        else if (key == "--xattrs")
            options.readXattrs = true;
        else if (key == "--debug")
            options.debug = true;
        else if (key == "--no-default-permissions")
            options.defaultPermissions = false;
        else if (key == "--splice")
            options.splice = true;
        else if (key == "--handles")
            options.zeroOpen = false;
        else if (key == "--single-fd")
            options.cloneFd = false;
        else if (key == "--parallel-dirops")
            options.parallelDirops = true;
        else if (key == "--fd-budget")
            options.maxInodeFds = std::strtoul(value, nullptr, 10), ++i;
        else if (key == "--max-watches")
            options.maxWatches = std::strtol(value, nullptr, 10), ++i;
    }
    const int backingFd = ::open(backing.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (backingFd == -1) {
        std::printf("error: %s: %s\n", backing.c_str(), std::strerror(errno));
        return 2;
    }
    options.backingFd = backingFd;
    options.onReady = [] {
        const char line[] = "mounted\n";
        (void)!::write(STDOUT_FILENO, line, sizeof line - 1);
    };
    BusyAllowPolicy policy;
    GateFs gate(options, policy);
    std::string error;
    if (!gate.mount(&error)) {
        std::printf("error: %s\n", error.c_str());
        return 3;
    }
    ::close(backingFd);
    g_gate = &gate;
    struct sigaction sa = {};
    sa.sa_handler = onSignal;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGTERM, &sa, nullptr);
    ::sigaction(SIGINT, &sa, nullptr);
    const int rc = gate.run();
    g_gate = nullptr;
    std::fprintf(stderr, "gatefs_harness: %llu policy lookups\n",
                 static_cast<unsigned long long>(policy.asked()));
    return rc == 0 ? 0 : 1;
}
