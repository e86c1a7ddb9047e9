#include "pathnamer.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>

namespace leasehold::fsgate::detail {

namespace {

constexpr std::string_view kDeleted = " (deleted)";

// readlink of /proc/self/fd/<fd> into `buf`: its length, or -1.
ssize_t fdPath(int fd, char *buf, std::size_t size)
{
    char link[40];
    std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    const ssize_t n = ::readlink(link, buf, size);
    if (n < 0 || static_cast<std::size_t>(n) >= size)
        return -1;
    return n;
}

} // namespace

PathNamer::PathNamer(int rootFd)
    : m_rootFd(rootFd)
{
    char buf[PATH_MAX + 1];
    const ssize_t n = fdPath(rootFd, buf, sizeof buf);
    if (n > 0)
        m_rootPath.assign(buf, static_cast<std::size_t>(n));
}

PathNamer::Result PathNamer::name(int fd, std::string &out) const
{
    char buf[PATH_MAX + 1];
    const ssize_t n = fdPath(fd, buf, sizeof buf);
    if (n < 0)
        return Result::Failed;
    std::string_view real(buf, static_cast<std::size_t>(n));
    if (real.ends_with(kDeleted)) {
        // The kernel marks a name that was removed; a name may also really end like that.
        struct stat st = {};
        if (::fstat(fd, &st) == 0 && st.st_nlink == 0) {
            real.remove_suffix(kDeleted.size());
            return strip(real, out);
        }
        const Result literal = strip(real, out);
        struct stat there = {};
        if (literal == Result::Named &&
            ::fstatat(m_rootFd, out.empty() ? "." : out.c_str(), &there, AT_SYMLINK_NOFOLLOW) ==
                0 &&
            there.st_dev == st.st_dev && there.st_ino == st.st_ino)
            return Result::Named;
        return Result::LinkedElsewhere;
    }
    return strip(real, out);
}

PathNamer::Result PathNamer::childName(int parentFd, std::string_view child, std::string &out) const
{
    const Result r = name(parentFd, out);
    if (r == Result::Named)
        join(out, child);
    return r;
}

void PathNamer::join(std::string &folder, std::string_view child)
{
    if (!folder.empty())
        folder += '/';
    folder += child;
}

PathNamer::Result PathNamer::strip(std::string_view real, std::string &out) const
{
    if (m_rootPath.empty())
        return Result::Failed;
    if (real == m_rootPath) {
        out.clear();
        return Result::Named;
    }
    if (m_rootPath == "/") {
        out.assign(real.substr(1));
        return Result::Named;
    }
    if (real.size() > m_rootPath.size() && real.starts_with(m_rootPath) &&
        real[m_rootPath.size()] == '/') {
        out.assign(real.substr(m_rootPath.size() + 1));
        return Result::Named;
    }
    return Result::Outside;
}

} // namespace leasehold::fsgate::detail
