#include "mountcontrol.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

extern char **environ;

namespace leasehold::fsgate::detail {

namespace {

// mountinfo escapes space, tab, newline and backslash as \ooo.
std::string unescape(const std::string &s)
{
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '\\' && i + 3 < s.size()) {
            const std::string digits = s.substr(i + 1, 3);
            if (digits.find_first_not_of("01234567") == std::string::npos) {
                out += static_cast<char>(std::strtol(digits.c_str(), nullptr, 8));
                i += 3;
                continue;
            }
        }
        out += s[i];
    }
    return out;
}

bool parseLine(const std::string &line, MountEntry &e)
{
    // id parent major:minor root mountpoint options [optional...] - fstype source superopts
    std::istringstream in(line);
    std::string devices, root, point, options;
    if (!(in >> e.id >> e.parent >> devices >> root >> point >> options))
        return false;
    if (std::sscanf(devices.c_str(), "%u:%u", &e.major, &e.minor) != 2)
        return false;
    std::string field;
    while (in >> field && field != "-") {
    }
    if (!(in >> e.fsType >> e.source))
        return false;
    e.mountPoint = unescape(point);
    e.source = unescape(e.source);
    return true;
}

bool privileged()
{
    return ::geteuid() == 0;
}

} // namespace

std::vector<MountEntry> readMountInfo()
{
    std::vector<MountEntry> entries;
    std::ifstream file("/proc/self/mountinfo");
    std::string line;
    while (std::getline(file, line)) {
        MountEntry e;
        if (parseLine(line, e))
            entries.push_back(std::move(e));
    }
    return entries;
}

std::optional<MountEntry> topMountAt(const std::string &mountPoint)
{
    const std::vector<MountEntry> all = readMountInfo();
    std::optional<MountEntry> top;
    for (const MountEntry &e : all) {
        if (e.mountPoint != mountPoint)
            continue;
        // Stacked mounts on one path: the one on top is not the parent of another there.
        bool covered = false;
        for (const MountEntry &other : all)
            covered = covered || (other.mountPoint == mountPoint && other.parent == e.id);
        if (!covered)
            top = e;
    }
    return top;
}

bool detachMount(const std::string &mountPoint, unsigned major, unsigned minor)
{
    const std::optional<MountEntry> top = topMountAt(mountPoint);
    if (!top || top->major != major || top->minor != minor)
        return false;
    if (::umount2(mountPoint.c_str(), MNT_DETACH | UMOUNT_NOFOLLOW) == 0)
        return true;
    if (privileged() && errno != EPERM)
        return false;
    // Unprivileged: fusermount3 checks the mount is a FUSE mount of ours, and does it.
    const char *argv[] = {"fusermount3", "-u", "-z", "-q", "--", mountPoint.c_str(), nullptr};
    pid_t pid = 0;
    if (::posix_spawnp(&pid, "fusermount3", nullptr, nullptr, const_cast<char *const *>(argv),
                       environ) != 0)
        return false;
    int status = 0;
    while (::waitpid(pid, &status, 0) == -1 && errno == EINTR) {
    }
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

bool abortConnection(unsigned minor)
{
    const std::string path = "/sys/fs/fuse/connections/" + std::to_string(minor) + "/abort";
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd == -1)
        return false;
    const bool ok = ::write(fd, "1", 1) == 1;
    ::close(fd);
    return ok;
}

} // namespace leasehold::fsgate::detail
