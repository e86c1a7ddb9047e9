// The gate's operations on files and their attributes: open and create (gated when they may
// write), the data path (read, write_buf, fallocate, copy_file_range; writes are asked of the
// policy one by one, from its memory), setattr, and the handle's end.
//
// Zero-open (GateFs::Options::zeroOpen): the first open is answered ENOSYS and the kernel then
// opens files itself, without a round trip. Only create still makes a handle; every other
// request on an open file comes with fh 0 and works on the inode (DataFd). The gating stays
// complete because nothing that changes a file happens at open: the truncation of O_TRUNC comes
// as setattr (atomic_o_trunc is off), and each write, fallocate and copy into the file comes as
// itself, asked of the policy before it is made.

#include "gatecore.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace leasehold::fsgate::detail {

namespace {

constexpr int kAttrChanges = FUSE_SET_ATTR_MODE | FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID |
                             FUSE_SET_ATTR_SIZE | FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME |
                             FUSE_SET_ATTR_ATIME_NOW | FUSE_SET_ATTR_MTIME_NOW |
                             FUSE_SET_ATTR_CTIME;

// Replies with what `fd` is on now. No pin may be held: the reply may let the kernel forget.
void replyStat(fuse_req_t req, int error, const struct stat &st, double timeout)
{
    if (error)
        fuse_reply_err(req, error);
    else
        fuse_reply_attr(req, &st, timeout);
}

int statOf(int fd, struct stat &st)
{
    return ::fstatat(fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) == -1 ? errno : 0;
}

void opGetattr(fuse_req_t req, fuse_ino_t ino, fuse_file_info *fi)
{
    GateCore &gate = gateOf(req);
    struct stat st = {};
    const int error = [&] {
        if (const FileHandle *handle = handleOf(fi))
            return statOf(handle->fd, st); // the open file pins its inode until release
        const InodeFd fd(gate.inodes(), gate.inodes().at(ino));
        return fd.error() ? fd.error() : statOf(fd.fd(), st);
    }();
    replyStat(req, error, st, gate.attrTimeout(gate.inodes().at(ino), st));
}

// `fd` is an open handle, or -1: then the O_PATH fd (`pathFd`) is reached through /proc.
int applyAttributes(const Inode &inode, int pathFd, int fd, const struct stat &attr, int valid)
{
    const FdPath viaProc(pathFd);
    if (valid & FUSE_SET_ATTR_MODE) {
        if (S_ISLNK(inode.type))
            return EOPNOTSUPP;
        if ((fd >= 0 ? ::fchmod(fd, attr.st_mode) : ::chmod(viaProc.c_str(), attr.st_mode)) == -1)
            return errno;
    }
    if (valid & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) {
        const uid_t uid = (valid & FUSE_SET_ATTR_UID) ? attr.st_uid : static_cast<uid_t>(-1);
        const gid_t gid = (valid & FUSE_SET_ATTR_GID) ? attr.st_gid : static_cast<gid_t>(-1);
        if (::fchownat(pathFd, "", uid, gid, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) == -1)
            return errno;
    }
    if (valid & FUSE_SET_ATTR_SIZE) {
        const int r = retryEintr([&] {
            return fd >= 0 ? ::ftruncate(fd, attr.st_size)
                           : ::truncate(viaProc.c_str(), attr.st_size);
        });
        if (r == -1)
            return errno;
    }
    if (valid & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME | FUSE_SET_ATTR_ATIME_NOW |
                 FUSE_SET_ATTR_MTIME_NOW)) {
        struct timespec times[2] = {{0, UTIME_OMIT}, {0, UTIME_OMIT}};
        if (valid & FUSE_SET_ATTR_ATIME_NOW)
            times[0].tv_nsec = UTIME_NOW;
        else if (valid & FUSE_SET_ATTR_ATIME)
            times[0] = attr.st_atim;
        if (valid & FUSE_SET_ATTR_MTIME_NOW)
            times[1].tv_nsec = UTIME_NOW;
        else if (valid & FUSE_SET_ATTR_MTIME)
            times[1] = attr.st_mtim;
        int r = 0;
        if (fd >= 0)
            r = ::futimens(fd, times);
        else if (S_ISLNK(inode.type))
            r = ::utimensat(pathFd, "", times, AT_EMPTY_PATH); // the link itself
        else
            r = ::utimensat(AT_FDCWD, viaProc.c_str(), times, 0);
        if (r == -1)
            return errno;
    }
    return 0; // FUSE_SET_ATTR_CTIME alone: any change above already moved it
}

void opSetattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int valid, fuse_file_info *fi)
{
    GateCore &gate = gateOf(req);
    Inode &inode = gate.inodes().at(ino);
    FileHandle *handle = handleOf(fi); // null too for ftruncate/futimens on fh 0
    struct stat st = {};
    const int error = [&] {
        const InodeFd pathFd(gate.inodes(), inode);
        if (pathFd.error())
            return pathFd.error();
        if (valid & kAttrChanges) {
            Change change;
            const bool sized = valid & FUSE_SET_ATTR_SIZE;
            change.op = sized ? ChangeOp::Truncate : ChangeOp::SetAttr;
            change.directory = inode.isDir();
            change.handle = handle && sized ? handle->id : 0;
            int e =
                handle ? gate.handlePath(*handle, change.path) : gate.nameOf(inode, change.path);
            if (!e)
                e = gate.admit(req, change);
            if (e)
                return e;
            e = applyAttributes(inode, pathFd.fd(), handle ? handle->fd : -1, *attr, valid);
            if (!e)
                gate.publish(Invalidation().inode(inode.key));
            gate.done(change, e);
            if (e)
                return e;
        }
        return statOf(handle ? handle->fd : pathFd.fd(), st);
    }();
    replyStat(req, error, st, gate.attrTimeout(inode, st));
}

// The reply for an open handle, or for a created file without one (zero-open: fh 0); false if
// the kernel did not take it (interrupted), and then the handle's owner cleans up.
bool replyOpened(fuse_req_t req, GateCore &gate, FileHandle *handle, fuse_file_info *fi,
                 const fuse_entry_param *entry)
{
    struct stat st = {};
    // Close-to-open: the kernel keeps the pages it cached only if the file is as it last saw.
    // A file just created has none worth keeping.
    fi->keep_cache =
        handle && ::fstat(handle->fd, &st) == 0 && gate.inodes().keepCache(*handle->inode, st);
    // Writes are synchronous (no writeback cache), so close() has nothing to flush.
    fi->noflush = 1;
    if (fi->flags & O_DIRECT)
        fi->direct_io = 1;
    fi->fh = reinterpret_cast<std::uint64_t>(handle);
    if (handle)
        gate.adopt(handle); // before the reply: release may come at once, on another worker
    const bool taken = (entry ? fuse_reply_create(req, entry, fi) : fuse_reply_open(req, fi)) == 0;
    if (!taken && handle)
        gate.disown(handle);
    return taken;
}

void opOpen(fuse_req_t req, fuse_ino_t ino, fuse_file_info *fi)
{
    GateCore &gate = gateOf(req);
    if (gate.zeroOpen) {
        // Once: from now on the kernel opens files itself and sends neither open nor release.
        fuse_reply_err(req, ENOSYS);
        return;
    }
    Inode &inode = gate.inodes().at(ino);
    auto handle = std::make_unique<FileHandle>();
    handle->id = gate.newHandleId();
    int pathFd = -1;
    if (const int error = gate.pinFor(*handle, inode, pathFd)) {
        fuse_reply_err(req, error);
        return;
    }
    const bool truncates = fi->flags & O_TRUNC;
    handle->gated = (fi->flags & O_ACCMODE) != O_RDONLY || truncates;
    Change change;
    if (handle->gated) {
        change.op = truncates ? ChangeOp::Truncate : ChangeOp::Open;
        change.handle = handle->id;
        int error = gate.handlePath(*handle, change.path);
        if (!error)
            error = gate.admit(req, change);
        if (error) {
            handle.reset(); // unpins: nothing of the inode is touched after a reply
            fuse_reply_err(req, error);
            return;
        }
    }
    const int flags = (fi->flags & ~(O_NOFOLLOW | O_CREAT | O_EXCL | O_NOCTTY)) | O_CLOEXEC;
    handle->fd = retryEintr([&] { return ::open(FdPath(pathFd).c_str(), flags); });
    const int error = handle->fd == -1 ? errno : 0;
    if (!error && truncates)
        gate.publish(Invalidation().inode(inode.key));
    if (handle->gated)
        gate.done(change, error);
    if (error) {
        handle.reset();
        fuse_reply_err(req, error);
        return;
    }
    if (!replyOpened(req, gate, handle.get(), fi, nullptr)) {
        const bool owed = handle->gated;
        const std::uint64_t id = handle->id;
        handle.reset();
        if (owed)
            gate.closed(id);
        return;
    }
    handle.release(); // owned by the kernel's file until release
}

void opCreate(fuse_req_t req, fuse_ino_t parentIno, const char *name, mode_t mode,
              fuse_file_info *fi)
{
    GateCore &gate = gateOf(req);
    Inode &parent = gate.inodes().at(parentIno);
    // Zero-open: the kernel never sends release, not even for a created file, so it gets no
    // handle (fh 0, change.handle 0) and the descriptor made here is closed before the reply.
    const bool handles = !gate.zeroOpen;
    auto handle = std::make_unique<FileHandle>();
    handle->id = handles ? gate.newHandleId() : 0;
    handle->gated = handles;
    int error = [&] {
        const InodeFd parentFd(gate.inodes(), parent);
        if (parentFd.error())
            return parentFd.error();
        // The kernel sends create for a name it believes missing; it may exist after all.
        struct stat was = {};
        const bool existed = ::fstatat(parentFd.fd(), name, &was, AT_SYMLINK_NOFOLLOW) == 0;
        Change change;
        change.op = !existed                ? ChangeOp::Create
                    : (fi->flags & O_TRUNC) ? ChangeOp::Truncate
                                            : ChangeOp::Open;
        change.handle = handle->id;
        int e = gate.nameOfChild(parent, name, change.path);
        if (!e)
            e = gate.admit(req, change);
        if (e)
            return e;
        // O_NOFOLLOW: the kernel resolved any symlink itself; one appearing here is a race.
        const int flags = fi->flags | O_CREAT | O_CLOEXEC | O_NOFOLLOW;
        handle->fd = retryEintr([&] { return ::openat(parentFd.fd(), name, flags, mode); });
        e = handle->fd == -1 ? errno : 0;
        if (!e && !existed) {
            gate.fixOwner(req, parentFd.fd(), name);
            gate.publish(Invalidation().entry(parent.key, name).inode(parent.key));
        } else if (!e && (fi->flags & O_TRUNC)) {
            gate.publish(Invalidation().inode(keyOf(was)));
        }
        gate.done(change, e);
        if (e)
            handle->gated = false; // refused or failed: no handle, nothing to close
        return e;
    }();
    if (!handles)
        handle.reset();
    fuse_entry_param e;
    int pathFd = -1;
    bool referenced = false;
    if (!error) {
        error = gate.lookupEntry(parent, name, e);
        referenced = error == 0;
    }
    if (!error && handle)
        error = gate.pinFor(*handle, gate.inodes().at(e.ino), pathFd);
    if (!error && replyOpened(req, gate, handle.get(), fi, &e)) {
        handle.release(); // owned by the kernel's file until release
        return;
    }
    // Not taken by the kernel: undo, in an order that never touches a forgotten inode.
    const bool owed = handle && handle->gated;
    const std::uint64_t id = handle ? handle->id : 0;
    handle.reset();
    if (referenced)
        gate.inodes().forget(e.ino, 1);
    if (owed)
        gate.closed(id);
    if (error)
        fuse_reply_err(req, error);
}

void opRead(fuse_req_t req, fuse_ino_t ino, std::size_t size, off_t off, fuse_file_info *fi)
{
    GateCore &gate = gateOf(req);
    const DataFd in(gate, ino, fi, O_RDONLY);
    if (in.error()) {
        fuse_reply_err(req, in.error());
        return;
    }
    fuse_bufvec buf{};
    buf.count = 1;
    buf.buf[0].size = size;
    buf.buf[0].flags = static_cast<fuse_buf_flags>(FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK);
    buf.buf[0].fd = in.fd();
    buf.buf[0].pos = off;
    fuse_reply_data(req, &buf, gate.settings().splice ? FUSE_BUF_SPLICE_MOVE : FUSE_BUF_NO_SPLICE);
}

// WriteData asked of the policy, then the system call, then the other gates told: one write.
// A file opened without asking (fh 0) has no handle for the change to carry, and a descriptor
// to write with is opened only once the policy said yes.
template<typename Write>
void gatedWrite(fuse_req_t req, fuse_ino_t ino, fuse_file_info *fi, Write write)
{
    GateCore &gate = gateOf(req);
    FileHandle *handle = handleOf(fi);
    Inode &inode = handle ? *handle->inode : gate.inodes().at(ino);
    Change change;
    change.op = ChangeOp::WriteData;
    change.handle = handle ? handle->id : 0;
    int error = handle ? gate.handlePath(*handle, change.path) : gate.nameOf(inode, change.path);
    if (!error)
        error = gate.admit(req, change);
    if (error) {
        if (fi->writepage)
            gate.dropPages(ino); // what a shared mapping wrote stays only in the kernel's cache
        fuse_reply_err(req, error);
        return;
    }
    ssize_t written = 0;
    {
        const DataFd out(gate, ino, fi, writeFlags(fi));
        written = out.error() ? -out.error() : write(out.fd());
    }
    error = written < 0 ? static_cast<int>(-written) : 0;
    if (!error)
        gate.publish(Invalidation().inode(inode.key));
    gate.done(change, error);
    if (error)
        fuse_reply_err(req, error);
    else if (written == 0 && write.replyZero)
        fuse_reply_err(req, 0);
    else
        fuse_reply_write(req, static_cast<std::size_t>(written));
}

struct BufWrite
{
    GateCore &gate;
    fuse_bufvec *in;
    off_t off;
    static constexpr bool replyZero = false;
    ssize_t operator()(int fd) const
    {
        fuse_bufvec out{};
        out.count = 1;
        out.buf[0].size = fuse_buf_size(in);
        out.buf[0].flags = static_cast<fuse_buf_flags>(FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK);
        out.buf[0].fd = fd;
        out.buf[0].pos = off;
        return fuse_buf_copy(
            &out, in, gate.settings().splice ? FUSE_BUF_SPLICE_NONBLOCK : FUSE_BUF_NO_SPLICE);
    }
};

void opWriteBuf(fuse_req_t req, fuse_ino_t ino, fuse_bufvec *in, off_t off, fuse_file_info *fi)
{
    gatedWrite(req, ino, fi, BufWrite{gateOf(req), in, off});
}

struct Allocate
{
    int mode;
    off_t off, length;
    static constexpr bool replyZero = true; // fallocate answers with an errno only
    ssize_t operator()(int fd) const
    {
        const int r = retryEintr([&] { return ::fallocate(fd, mode, off, length); });
        return r == -1 ? -errno : 0;
    }
};

void opFallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t off, off_t length,
                 fuse_file_info *fi)
{
    gatedWrite(req, ino, fi, Allocate{mode, off, length});
}

struct CopyRange
{
    int in;
    off_t inOff, outOff;
    std::size_t length;
    int flags;
    static constexpr bool replyZero = false;
    ssize_t operator()(int out) const
    {
        loff_t a = inOff, b = outOff;
        const ssize_t n = retryEintr([&] {
            return ::copy_file_range(in, &a, out, &b, length, static_cast<unsigned>(flags));
        });
        return n == -1 ? -errno : n;
    }
};

void opCopyFileRange(fuse_req_t req, fuse_ino_t inIno, off_t inOff, fuse_file_info *inFi,
                     fuse_ino_t outIno, off_t outOff, fuse_file_info *outFi, std::size_t length,
                     int flags)
{
    const DataFd in(gateOf(req), inIno, inFi, O_RDONLY);
    if (in.error()) {
        fuse_reply_err(req, in.error());
        return;
    }
    gatedWrite(req, outIno, outFi, CopyRange{in.fd(), inOff, outOff, length, flags});
}

void opLseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence, fuse_file_info *fi)
{
    const DataFd data(gateOf(req), ino, fi, O_RDONLY); // SEEK_DATA, SEEK_HOLE: the kernel's rest
    const off_t r = data.error() ? (errno = data.error(), -1) : ::lseek(data.fd(), off, whence);
    if (r == -1)
        fuse_reply_err(req, errno);
    else
        fuse_reply_lseek(req, r);
}

void opFlush(fuse_req_t req, fuse_ino_t, fuse_file_info *fi)
{
    const FileHandle *handle = handleOf(fi);
    if (!handle) {
        // A file opened without asking has no noflush to set, so the kernel would send flush at
        // every close: ENOSYS once makes it stop (writes are synchronous: nothing to flush).
        fuse_reply_err(req, ENOSYS);
        return;
    }
    // Only when the kernel ignores noflush: report what closing a copy of the fd reports.
    const int copy = ::dup(handle->fd);
    fuse_reply_err(req, copy == -1 || ::close(copy) == -1 ? errno : 0);
}

void opFsync(fuse_req_t req, fuse_ino_t ino, int datasync, fuse_file_info *fi)
{
    const DataFd data(gateOf(req), ino, fi, O_RDONLY); // fsync flushes the file, whatever fd
    const int fd = data.fd();
    const int r = data.error()
                      ? (errno = data.error(), -1)
                      : retryEintr([&] { return datasync ? ::fdatasync(fd) : ::fsync(fd); });
    fuse_reply_err(req, r == -1 ? errno : 0);
}

void opRelease(fuse_req_t req, fuse_ino_t, fuse_file_info *fi)
{
    if (!handleOf(fi)) { // not sent for files opened without asking; harmless if it were
        fuse_reply_err(req, 0);
        return;
    }
    std::unique_ptr<FileHandle> handle(&fileOf(fi));
    gateOf(req).disown(handle.get());
    const bool gated = handle->gated;
    const std::uint64_t id = handle->id;
    handle.reset(); // closes the backing fd before the policy hears of it
    if (gated)
        gateOf(req).closed(id);
    fuse_reply_err(req, 0);
}

} // namespace

void addFileOperations(fuse_lowlevel_ops &ops)
{
    ops.getattr = opGetattr;
    ops.setattr = opSetattr;
    ops.open = opOpen;
    ops.create = opCreate;
    ops.read = opRead;
    ops.write_buf = opWriteBuf;
    ops.fallocate = opFallocate;
    ops.copy_file_range = opCopyFileRange;
    ops.lseek = opLseek;
    ops.flush = opFlush;
    ops.fsync = opFsync;
    ops.release = opRelease;
}

} // namespace leasehold::fsgate::detail
