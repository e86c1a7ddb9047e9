#pragma once

#include <string>
#include <string_view>

// Names files for the policy: the path below the gate's root, '/'-separated, no leading slash,
// "" for the root. The name comes from the backing descriptor itself (readlink of
// /proc/self/fd/N), so it is right after any rename of a folder above the file, whoever made
// it: through this gate, another gate or outside of all of them. The backing root's own path is
// read once, at construction; the root cannot be renamed while the gate is mounted over it.
//
// Thread-safety: const after construction; any thread may call it.
namespace leasehold::fsgate::detail {

class PathNamer
{
public:
    enum class Result {
        Named,           // `out` holds the name
        LinkedElsewhere, // the fd's own name was removed but the file has other links
        Outside,         // not below the root (a bind mount, a moved root): cannot be named
        Failed,          // readlink failed
    };

    // Requires: `rootFd` is open on the backing root for the namer's lifetime.
    explicit PathNamer(int rootFd);

    const std::string &rootPath() const { return m_rootPath; }

    // The name of what `fd` is open on. A file removed while open is named as it was.
    Result name(int fd, std::string &out) const;
    // `parentFd`'s name joined with `child`.
    Result childName(int parentFd, std::string_view child, std::string &out) const;
    // Joins a folder's name and a child name.
    static void join(std::string &folder, std::string_view child);

private:
    Result strip(std::string_view real, std::string &out) const;

    int m_rootFd;
    std::string m_rootPath;
};

} // namespace leasehold::fsgate::detail
