// The gate's operations on folders (opendir, readdir and readdirplus over getdents64, with the
// unconsumed rest of a batch kept for the next call), and the ones that only read or touch
// extended attributes, links and the file system's numbers. Only setxattr and removexattr
// change anything here.

#include "gatecore.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <vector>

namespace leasehold::fsgate::detail {

namespace {

constexpr std::size_t kDirBuffer = 32 * 1024;

// A handle on `inode`'s listing: 0, or the errno.
int openFolder(GateCore &gate, Inode &inode, DirHandle &handle)
{
    const InodeFd fd(gate.inodes(), inode);
    if (fd.error())
        return fd.error();
    handle.fd = ::openat(fd.fd(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (handle.fd == -1)
        return errno;
    handle.capacity = kDirBuffer;
    handle.buffer = std::make_unique<std::uint64_t[]>(kDirBuffer / sizeof(std::uint64_t));
    return 0;
}

void opOpendir(fuse_req_t req, fuse_ino_t ino, fuse_file_info *fi)
{
    GateCore &gate = gateOf(req);
    if (gate.zeroOpendir) {
        fuse_reply_err(req, ENOSYS); // from now on the kernel opens folders itself
        return;
    }
    Inode &inode = gate.inodes().at(ino);
    auto handle = std::make_unique<DirHandle>();
    if (const int error = openFolder(gate, inode, *handle)) {
        fuse_reply_err(req, error);
        return;
    }
    if (gate.settings().cacheReaddir) {
        // The kernel keeps the listing while the folder is as it last saw it (see open).
        struct stat st = {};
        fi->cache_readdir = 1;
        fi->keep_cache = ::fstat(handle->fd, &st) == 0 && gate.inodes().keepCache(inode, st);
    }
    fi->fh = reinterpret_cast<std::uint64_t>(handle.get());
    gate.adopt(handle.get());
    if (fuse_reply_open(req, fi) == 0)
        handle.release();
    else
        gate.disown(handle.get());
}

bool isDotOrDotDot(const char *name)
{
    return name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'));
}

// One getdents64 record, read field by field (the buffer is only 8-aligned at its start).
struct Record
{
    std::uint64_t ino;
    off_t next;
    unsigned short length;
    unsigned char type;
    const char *name;
};

Record recordAt(const char *at)
{
    Record r;
    std::memcpy(&r.ino, at + offsetof(struct dirent64, d_ino), sizeof r.ino);
    std::memcpy(&r.next, at + offsetof(struct dirent64, d_off), sizeof r.next);
    std::memcpy(&r.length, at + offsetof(struct dirent64, d_reclen), sizeof r.length);
    std::memcpy(&r.type, at + offsetof(struct dirent64, d_type), sizeof r.type);
    r.name = at + offsetof(struct dirent64, d_name);
    return r;
}

void readFolder(fuse_req_t req, fuse_ino_t ino, std::size_t size, off_t offset, fuse_file_info *fi,
                bool plus)
{
    GateCore &gate = gateOf(req);
    Inode &folder = gate.inodes().at(ino);
    // Without opendir (zero-message opens) each call opens the folder and seeks to `offset`.
    std::unique_ptr<DirHandle> once;
    if (fi->fh == 0) {
        once = std::make_unique<DirHandle>();
        if (const int error = openFolder(gate, folder, *once)) {
            fuse_reply_err(req, error);
            return;
        }
    }
    DirHandle &dir = once ? *once : dirOf(fi);
    std::vector<char> reply(size);
    std::vector<fuse_ino_t> looked; // references handed out in this reply
    std::size_t used = 0;
    int error = 0;
    {
        std::lock_guard lock(dir.mutex);
        if (offset != dir.offset) {
            if (::lseek(dir.fd, offset, SEEK_SET) == -1) {
                fuse_reply_err(req, errno);
                return;
            }
            dir.pos = dir.end = 0;
            dir.offset = offset;
            dir.eof = false;
        }
        char *const base = reinterpret_cast<char *>(dir.buffer.get());
        for (;;) {
            if (dir.pos == dir.end) {
                if (dir.eof)
                    break;
                const long n = retryEintr([&] { return ::getdents64(dir.fd, base, dir.capacity); });
                if (n <= 0) {
                    error = n < 0 ? errno : 0;
                    dir.eof = n == 0;
                    break;
                }
                dir.pos = 0;
                dir.end = static_cast<std::size_t>(n);
            }
            const Record r = recordAt(base + dir.pos);
            const std::size_t need =
                plus ? fuse_add_direntry_plus(req, nullptr, 0, r.name, nullptr, 0)
                     : fuse_add_direntry(req, nullptr, 0, r.name, nullptr, 0);
            if (used + need > size)
                break; // stays buffered for the next call
            fuse_entry_param e{};
            e.attr.st_ino = static_cast<ino_t>(r.ino);
            e.attr.st_mode = static_cast<mode_t>(r.type) << 12;
            bool listed = true;
            if (plus && !isDotOrDotDot(r.name)) {
                const int found = gate.lookupEntry(folder, r.name, e);
                if (found == ENOENT) {
                    listed = false; // removed since getdents: not there any more
                } else if (found) {
                    e = fuse_entry_param{}; // listed without attributes: the kernel looks it up
                    e.attr.st_ino = static_cast<ino_t>(r.ino);
                    e.attr.st_mode = static_cast<mode_t>(r.type) << 12;
                } else {
                    looked.push_back(e.ino);
                }
            }
            if (listed) {
                char *out = reply.data() + used;
                used += plus ? fuse_add_direntry_plus(req, out, size - used, r.name, &e, r.next)
                             : fuse_add_direntry(req, out, size - used, r.name, &e.attr, r.next);
            }
            dir.pos += r.length;
            dir.offset = r.next;
        }
    }
    // An error after some entries: return those, the next call meets the error again.
    if (error && used == 0) {
        fuse_reply_err(req, error);
        return;
    }
    if (fuse_reply_buf(req, reply.data(), used) != 0) {
        for (fuse_ino_t each : looked)
            gate.inodes().forget(each, 1);
    }
}

void opReaddir(fuse_req_t req, fuse_ino_t ino, std::size_t size, off_t off, fuse_file_info *fi)
{
    readFolder(req, ino, size, off, fi, false);
}

void opReaddirplus(fuse_req_t req, fuse_ino_t ino, std::size_t size, off_t off, fuse_file_info *fi)
{
    readFolder(req, ino, size, off, fi, true);
}

void opReleasedir(fuse_req_t req, fuse_ino_t, fuse_file_info *fi)
{
    if (fi->fh) {
        gateOf(req).disown(&dirOf(fi));
        delete &dirOf(fi);
    }
    fuse_reply_err(req, 0);
}

void opFsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync, fuse_file_info *fi)
{
    GateCore &gate = gateOf(req);
    DirHandle once;
    if (fi->fh == 0) {
        if (const int error = openFolder(gate, gate.inodes().at(ino), once)) {
            fuse_reply_err(req, error);
            return;
        }
    }
    const int fd = fi->fh ? dirOf(fi).fd : once.fd;
    fuse_reply_err(req, (datasync ? ::fdatasync(fd) : ::fsync(fd)) == -1 ? errno : 0);
}

// Runs `read(fd)` on the inode's pinned fd: 0 or an errno. The pin ends before any reply.
template<typename Read> int withFd(GateCore &gate, fuse_ino_t ino, Read read)
{
    const InodeFd fd(gate.inodes(), gate.inodes().at(ino));
    return fd.error() ? fd.error() : read(fd.fd());
}

void opStatfs(fuse_req_t req, fuse_ino_t ino)
{
    struct statvfs st = {};
    const int error =
        withFd(gateOf(req), ino, [&](int fd) { return ::fstatvfs(fd, &st) == -1 ? errno : 0; });
    if (error)
        fuse_reply_err(req, error);
    else
        fuse_reply_statfs(req, &st);
}

void opReadlink(fuse_req_t req, fuse_ino_t ino)
{
    char buf[PATH_MAX + 1];
    const int error = withFd(gateOf(req), ino, [&](int fd) {
        const ssize_t n = ::readlinkat(fd, "", buf, sizeof buf);
        if (n == -1)
            return errno;
        if (static_cast<std::size_t>(n) == sizeof buf)
            return ENAMETOOLONG;
        buf[n] = '\0';
        return 0;
    });
    if (error)
        fuse_reply_err(req, error);
    else
        fuse_reply_readlink(req, buf);
}

// getxattr and listxattr: size 0 asks for the length only.
template<typename Read> void replyXattr(fuse_req_t req, fuse_ino_t ino, std::size_t size, Read read)
{
    GateCore &gate = gateOf(req);
    if (!gate.settings().readXattrs) {
        fuse_reply_err(req, ENOSYS); // see GateFs::Options::readXattrs
        return;
    }
    std::vector<char> value(size);
    ssize_t n = 0;
    const int error = withFd(gate, ino, [&](int fd) {
        n = read(FdPath(fd).c_str(), size ? value.data() : nullptr, size);
        return n == -1 ? errno : 0;
    });
    if (error)
        fuse_reply_err(req, error);
    else if (size == 0)
        fuse_reply_xattr(req, static_cast<std::size_t>(n));
    else
        fuse_reply_buf(req, value.data(), static_cast<std::size_t>(n));
}

void opGetxattr(fuse_req_t req, fuse_ino_t ino, const char *name, std::size_t size)
{
    replyXattr(req, ino, size, [&](const char *path, char *buf, std::size_t n) {
        return ::getxattr(path, name, buf, n);
    });
}

void opListxattr(fuse_req_t req, fuse_ino_t ino, std::size_t size)
{
    replyXattr(req, ino, size, [&](const char *path, char *buf, std::size_t n) {
        return ::listxattr(path, buf, n);
    });
}

template<typename Change_> void changeXattr(fuse_req_t req, fuse_ino_t ino, Change_ apply)
{
    GateCore &gate = gateOf(req);
    Inode &inode = gate.inodes().at(ino);
    const int error = [&] {
        const InodeFd fd(gate.inodes(), inode);
        Change change;
        change.op = ChangeOp::Xattr;
        change.directory = inode.isDir();
        int e = fd.error();
        if (!e)
            e = gate.nameOf(inode, change.path);
        if (!e)
            e = gate.admit(req, change);
        if (e)
            return e;
        e = apply(FdPath(fd.fd()).c_str()) == -1 ? errno : 0;
        if (!e)
            gate.publish(Invalidation().inode(inode.key));
        gate.done(change, e);
        return e;
    }();
    fuse_reply_err(req, error);
}

void opSetxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value,
                std::size_t size, int flags)
{
    changeXattr(req, ino,
                [&](const char *path) { return ::setxattr(path, name, value, size, flags); });
}

void opRemovexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
    changeXattr(req, ino, [&](const char *path) { return ::removexattr(path, name); });
}

} // namespace

void addDirOperations(fuse_lowlevel_ops &ops)
{
    ops.opendir = opOpendir;
    ops.readdir = opReaddir;
    ops.readdirplus = opReaddirplus;
    ops.releasedir = opReleasedir;
    ops.fsyncdir = opFsyncdir;
    ops.statfs = opStatfs;
    ops.readlink = opReadlink;
    ops.getxattr = opGetxattr;
    ops.listxattr = opListxattr;
    ops.setxattr = opSetxattr;
    ops.removexattr = opRemovexattr;
}

} // namespace leasehold::fsgate::detail
