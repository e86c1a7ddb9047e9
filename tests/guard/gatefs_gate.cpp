// tst_gatefs's gate: mounts a GateFs in its own process with a test policy that refuses a set of
// paths and records every admit, done and closed in a log the test reads. Prints "mounted" when
// the kernel opened the connection, "error: ..." if mounting failed; SIGTERM stops it.
//
//   tst_gatefs_gate --backing DIR --mount DIR --log FILE [--bus DIR|-] [--fd-budget N]
//                   [--handles 1] [--max-watches N] [--deny PATH]...
//
// --handles 1: GateFs::Options::zeroOpen off (open and release round trips, a handle per open).
//
// A refused path refuses the change when it names the path or anything below it; a change to a
// folder (`directory`) is refused too when a refused path lies below that folder.

#include "gatefs.h"
#include "gatepolicy.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

using namespace leasehold::fsgate;

namespace {

GateFs *g_gate = nullptr;

void onSignal(int)
{
    if (g_gate)
        g_gate->stop();
}

bool under(const std::string &path, const std::string &folder)
{
    return path == folder || folder.empty() ||
           (path.size() > folder.size() && path.compare(0, folder.size(), folder) == 0 &&
            path[folder.size()] == '/');
}

// Bytes outside printable ASCII, tab separators and '%' itself as %XX.
std::string escaped(const std::string &s)
{
    std::string out;
    for (unsigned char c : s) {
        if (c <= 0x20 || c >= 0x7f || c == '%') {
            char hex[4];
            std::snprintf(hex, sizeof hex, "%%%02X", c);
            out += hex;
        } else {
            out += static_cast<char>(c);
        }
    }
    return out;
}

class TestPolicy : public GatePolicy
{
public:
    TestPolicy(std::vector<std::string> denied, FILE *log)
        : m_denied(std::move(denied))
        , m_log(log)
    {}

    int admit(const Change &c) override
    {
        const int verdict = refused(c) ? EACCES : 0;
        write("admit\t%s\t%s\t%s\t%d\t%d\t%llu\t%d\t%s\t%d\n", c, verdict);
        return verdict;
    }
    void done(const Change &c, int error) override
    {
        write("done\t%s\t%s\t%s\t%d\t%d\t%llu\t%d\t%s\t%d\n", c, error);
    }
    void closed(std::uint64_t handle) override
    {
        std::lock_guard lock(m_mutex);
        std::fprintf(m_log, "closed\t%llu\n", static_cast<unsigned long long>(handle));
        std::fflush(m_log);
    }

private:
    bool refused(const Change &c) const
    {
        for (const std::string &d : m_denied) {
            if (under(c.path, d) || (!c.target.empty() && under(c.target, d)))
                return true;
            if ((c.directory && under(d, c.path)) ||
                (c.targetDirectory && !c.target.empty() && under(d, c.target)))
                return true;
        }
        return false;
    }
    void write(const char *format, const Change &c, int value)
    {
        std::lock_guard lock(m_mutex);
        std::fprintf(m_log, format, std::string(changeOpName(c.op)).c_str(),
                     escaped(c.path).c_str(), escaped(c.target).c_str(), c.directory ? 1 : 0,
                     c.targetDirectory ? 1 : 0, static_cast<unsigned long long>(c.handle), c.pid,
                     escaped(c.command).c_str(), value);
        std::fflush(m_log);
    }

    std::vector<std::string> m_denied;
    FILE *m_log;
    std::mutex m_mutex;
};

} // namespace

int main(int argc, char **argv)
{
    std::string backing, mountPoint, logPath, bus;
    std::vector<std::string> denied;
    std::size_t budget = 0;
    bool handles = false;
    long maxWatches = -1;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string key = argv[i];
        const char *value = argv[i + 1];
        if (key == "--backing")
            backing = value;
        else if (key == "--mount")
            mountPoint = value;
        else if (key == "--log")
            logPath = value;
        else if (key == "--bus")
            bus = value;
        else if (key == "--deny")
            denied.emplace_back(value);
        else if (key == "--fd-budget")
            budget = std::strtoul(value, nullptr, 10);
        else if (key == "--handles")
            handles = std::strcmp(value, "1") == 0;
        else if (key == "--max-watches")
            maxWatches = std::strtol(value, nullptr, 10);
    }
    FILE *log = std::fopen(logPath.c_str(), "a");
    const int backingFd = ::open(backing.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (!log || backingFd == -1) {
        std::printf("error: cannot open %s or %s: %s\n", logPath.c_str(), backing.c_str(),
                    std::strerror(errno));
        return 2;
    }
    TestPolicy policy(denied, log);
    GateFs::Options options;
    options.mountPoint = mountPoint;
    options.backingFd = backingFd;
    options.busDirectory = bus;
    options.maxInodeFds = budget;
    options.zeroOpen = !handles;
    options.maxWatches = maxWatches;
    options.onReady = [] {
        const char line[] = "mounted\n";
        (void)!::write(STDOUT_FILENO, line, sizeof line - 1);
    };
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
    std::fclose(log);
    return rc == 0 ? 0 : 1;
}
