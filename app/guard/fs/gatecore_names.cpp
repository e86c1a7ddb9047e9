// GateCore: what a change is called — a file's workspace name from its inode, its open handle
// or its parent, and the command of the process that makes it.

#include "gatecore.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>

namespace leasehold::fsgate::detail {

namespace {

std::int64_t steadyMs()
{
    using namespace std::chrono;
    return duration_cast<milliseconds>(steady_clock::now().time_since_epoch()).count();
}

} // namespace

// /proc/<pid>/comm costs three system calls: remember it for a little while. A command that
// execs another program under the same pid is renamed within two seconds.
std::string GateCore::command(int pid)
{
    const std::int64_t now = steadyMs();
    {
        std::lock_guard lock(m_commandMutex);
        auto it = m_commands.find(pid);
        if (it != m_commands.end() && now - it->second.at < 2000)
            return it->second.name;
    }
    char path[40];
    std::snprintf(path, sizeof path, "/proc/%d/comm", pid);
    std::string name;
    const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        char buf[64];
        const ssize_t n = ::read(fd, buf, sizeof buf);
        ::close(fd);
        if (n > 0)
            name.assign(buf, static_cast<std::size_t>(buf[n - 1] == '\n' ? n - 1 : n));
    }
    std::lock_guard lock(m_commandMutex);
    if (m_commands.size() > 4096)
        m_commands.clear();
    m_commands[pid] = Command{name, now};
    return name;
}

int GateCore::nameOf(Inode &inode, std::string &out)
{
    const InodeFd fd(m_inodes, inode);
    return fd.error() ? fd.error() : nameVia(inode, fd.fd(), out);
}

// `fd` is open on `inode`: its O_PATH fd or an open handle's.
int GateCore::nameVia(Inode &inode, int fd, std::string &out)
{
    switch (m_namer.name(fd, out)) {
    case PathNamer::Result::Named:
        return 0;
    case PathNamer::Result::LinkedElsewhere:
        return nameLinked(inode, out);
    case PathNamer::Result::Outside:
    case PathNamer::Result::Failed:
        break;
    }
    // What cannot be named cannot be judged: refuse rather than guess.
    if (m_settings.debug)
        std::fprintf(stderr, "leasehold gate: cannot name fd %d\n", fd);
    return EACCES;
}

// The fd's own name was removed but another link remains: use the last name the file was
// reached by, once checked to still be this file.
int GateCore::nameLinked(Inode &inode, std::string &out)
{
    std::string child;
    const int parentFd = m_inodes.lastName(inode, child);
    if (parentFd < 0)
        return EACCES;
    struct stat st = {};
    int error = EACCES;
    if (::fstatat(parentFd, child.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        keyOf(st) == inode.key &&
        m_namer.childName(parentFd, child, out) == PathNamer::Result::Named)
        error = 0;
    ::close(parentFd);
    return error;
}

int GateCore::nameOfChild(Inode &parent, const char *name, std::string &out)
{
    const int error = nameOf(parent, out);
    if (error == 0)
        PathNamer::join(out, name);
    return error;
}

int GateCore::handlePath(FileHandle &handle, std::string &out)
{
    const std::uint64_t epoch = m_nameEpoch.load(std::memory_order_acquire);
    std::lock_guard lock(handle.mutex);
    if (handle.pathEpoch != epoch) {
        const int error = handle.fd >= 0 ? nameVia(*handle.inode, handle.fd, handle.path)
                                         : nameOf(*handle.inode, handle.path);
        if (error)
            return error;
        handle.pathEpoch = epoch;
    }
    out = handle.path;
    return 0;
}

} // namespace leasehold::fsgate::detail
