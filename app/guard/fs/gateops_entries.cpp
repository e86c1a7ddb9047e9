// The gate's operations on names: lookup and forget, and every change that makes, removes or
// moves a name. Each handler replies exactly once; a refused change replies the policy's errno
// before any system call.

#include "gatecore.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace leasehold::fsgate::detail {

namespace {

void opLookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
    GateCore &gate = gateOf(req);
    fuse_entry_param e;
    const int error = gate.lookupEntry(gate.inodes().at(parent), name, e);
    if (error == ENOENT) {
        // A negative entry the kernel may cache: other gates' creations invalidate it.
        e = fuse_entry_param{};
        e.entry_timeout = gate.negativeTimeout(gate.inodes().at(parent));
        fuse_reply_entry(req, &e);
        return;
    }
    if (error) {
        fuse_reply_err(req, error);
        return;
    }
    if (fuse_reply_entry(req, &e) != 0)
        gate.inodes().forget(e.ino, 1);
}

void opForget(fuse_req_t req, fuse_ino_t ino, std::uint64_t nlookup)
{
    gateOf(req).inodes().forget(ino, nlookup);
    fuse_reply_none(req);
}

void opForgetMulti(fuse_req_t req, std::size_t count, fuse_forget_data *forgets)
{
    InodeTable &inodes = gateOf(req).inodes();
    for (std::size_t i = 0; i < count; ++i)
        inodes.forget(forgets[i].ino, forgets[i].nlookup);
    fuse_reply_none(req);
}

// mknod, mkdir, symlink: one shape, `make` does the system call on the parent's fd.
template<typename Make>
void makeName(fuse_req_t req, fuse_ino_t parentIno, const char *name, ChangeOp op, Make make)
{
    GateCore &gate = gateOf(req);
    Inode &parent = gate.inodes().at(parentIno);
    bool made = false;
    // Pinned only inside: once replied to, the kernel may forget the folder at once.
    const int error = [&] {
        const InodeFd parentFd(gate.inodes(), parent);
        Change change;
        change.op = op;
        change.directory = op == ChangeOp::Mkdir;
        int e = parentFd.error();
        if (!e)
            e = gate.nameOfChild(parent, name, change.path);
        if (!e)
            e = gate.admit(req, change);
        if (e)
            return e;
        e = make(parentFd.fd()) == -1 ? errno : 0;
        if (!e) {
            gate.fixOwner(req, parentFd.fd(), name);
            gate.publish(Invalidation().entry(parent.key, name).inode(parent.key));
            made = true;
        }
        gate.done(change, e);
        return e;
    }();
    if (made)
        gate.replyNewEntry(req, parent, name);
    else
        fuse_reply_err(req, error);
}

void opMknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev)
{
    makeName(req, parent, name, ChangeOp::Create,
             [&](int fd) { return ::mknodat(fd, name, mode, rdev); });
}

void opMkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
    makeName(req, parent, name, ChangeOp::Mkdir, [&](int fd) { return ::mkdirat(fd, name, mode); });
}

void opSymlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
    makeName(req, parent, name, ChangeOp::Symlink,
             [&](int fd) { return ::symlinkat(link, fd, name); });
}

void opLink(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newParentIno, const char *newName)
{
    GateCore &gate = gateOf(req);
    Inode &inode = gate.inodes().at(ino);
    Inode &newParent = gate.inodes().at(newParentIno);
    fuse_entry_param e{};
    const int error = [&] {
        const InodeFd inodeFd(gate.inodes(), inode);
        const InodeFd newParentFd(gate.inodes(), newParent);
        Change change;
        change.op = ChangeOp::Link;
        int err = inodeFd.error() ? inodeFd.error() : newParentFd.error();
        if (!err)
            err = gate.nameOf(inode, change.path);
        if (!err)
            err = gate.nameOfChild(newParent, newName, change.target);
        if (!err)
            err = gate.admit(req, change);
        if (err)
            return err;
        // Through /proc: linkat(AT_EMPTY_PATH) needs CAP_DAC_READ_SEARCH. A symlink cannot be
        // followed that way, so it takes the privileged call.
        const int r = S_ISLNK(inode.type)
                          ? ::linkat(inodeFd.fd(), "", newParentFd.fd(), newName, AT_EMPTY_PATH)
                          : ::linkat(AT_FDCWD, FdPath(inodeFd.fd()).c_str(), newParentFd.fd(),
                                     newName, AT_SYMLINK_FOLLOW);
        err = r == -1 ? errno : 0;
        if (!err) {
            gate.namesMoved();
            gate.publish(
                Invalidation().entry(newParent.key, newName).inode(newParent.key).inode(inode.key));
        }
        gate.done(change, err);
        if (!err && ::fstat(inodeFd.fd(), &e.attr) == -1)
            err = errno;
        if (!err)
            gate.inodes().addRef(inode, newParent, newName); // the reply's reference
        return err;
    }();
    if (error) {
        fuse_reply_err(req, error);
        return;
    }
    e.ino = ino;
    e.attr_timeout = gate.settings().attrTimeout;
    e.entry_timeout = gate.settings().entryTimeout;
    if (fuse_reply_entry(req, &e) != 0)
        gate.inodes().forget(ino, 1);
}

// unlink and rmdir.
void removeName(fuse_req_t req, fuse_ino_t parentIno, const char *name, bool folder)
{
    GateCore &gate = gateOf(req);
    Inode &parent = gate.inodes().at(parentIno);
    const int error = [&] {
        const InodeFd parentFd(gate.inodes(), parent);
        struct stat st = {};
        if (parentFd.error())
            return parentFd.error();
        if (::fstatat(parentFd.fd(), name, &st, AT_SYMLINK_NOFOLLOW) == -1)
            return errno;
        Change change;
        change.op = folder ? ChangeOp::Rmdir : ChangeOp::Unlink;
        change.directory = S_ISDIR(st.st_mode);
        int e = gate.nameOfChild(parent, name, change.path);
        if (!e)
            e = gate.admit(req, change);
        if (e)
            return e;
        if (!S_ISDIR(st.st_mode))
            gate.inodes().keepResident(keyOf(st)); // it may be open: see keepResident
        e = ::unlinkat(parentFd.fd(), name, folder ? AT_REMOVEDIR : 0) == -1 ? errno : 0;
        if (!e) {
            gate.namesMoved();
            gate.publish(Invalidation().entry(parent.key, name).inode(parent.key).inode(keyOf(st)));
        }
        gate.done(change, e);
        return e;
    }();
    fuse_reply_err(req, error);
}

void opUnlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
    removeName(req, parent, name, false);
}

void opRmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
    removeName(req, parent, name, true);
}

void opRename(fuse_req_t req, fuse_ino_t parentIno, const char *name, fuse_ino_t newParentIno,
              const char *newName, unsigned int flags)
{
    GateCore &gate = gateOf(req);
    if (flags & ~static_cast<unsigned>(RENAME_NOREPLACE | RENAME_EXCHANGE | RENAME_WHITEOUT)) {
        fuse_reply_err(req, EINVAL);
        return;
    }
    Inode &parent = gate.inodes().at(parentIno);
    Inode &newParent = gate.inodes().at(newParentIno);
    const int error = [&] {
        const InodeFd parentFd(gate.inodes(), parent);
        const InodeFd newParentFd(gate.inodes(), newParent);
        if (parentFd.error() || newParentFd.error())
            return parentFd.error() ? parentFd.error() : newParentFd.error();
        struct stat from = {};
        if (::fstatat(parentFd.fd(), name, &from, AT_SYMLINK_NOFOLLOW) == -1)
            return errno;
        struct stat to = {};
        const bool replaces = ::fstatat(newParentFd.fd(), newName, &to, AT_SYMLINK_NOFOLLOW) == 0;
        Change change;
        change.op = (flags & RENAME_EXCHANGE) ? ChangeOp::Exchange : ChangeOp::Rename;
        change.directory = S_ISDIR(from.st_mode);
        change.targetDirectory = replaces && S_ISDIR(to.st_mode);
        int e = gate.nameOfChild(parent, name, change.path);
        if (!e)
            e = gate.nameOfChild(newParent, newName, change.target);
        if (!e)
            e = gate.admit(req, change);
        if (e)
            return e;
        if (replaces && !(flags & RENAME_EXCHANGE) && !S_ISDIR(to.st_mode))
            gate.inodes().keepResident(keyOf(to)); // replaced, and it may be open
        e = ::renameat2(parentFd.fd(), name, newParentFd.fd(), newName, flags) == -1 ? errno : 0;
        if (!e) {
            gate.namesMoved();
            gate.inodes().renamed(keyOf(from), newParent.key, newName);
            if (flags & RENAME_EXCHANGE)
                gate.inodes().renamed(keyOf(to), parent.key, name);
            Invalidation what;
            what.entry(parent.key, name).entry(newParent.key, newName).inode(keyOf(from));
            what.inode(parent.key);
            if (!(newParent.key == parent.key))
                what.inode(newParent.key);
            if (replaces)
                what.inode(keyOf(to));
            gate.publish(what);
        }
        gate.done(change, e);
        return e;
    }();
    fuse_reply_err(req, error);
}

} // namespace

void addEntryOperations(fuse_lowlevel_ops &ops)
{
    ops.lookup = opLookup;
    ops.forget = opForget;
    ops.forget_multi = opForgetMulti;
    ops.mknod = opMknod;
    ops.mkdir = opMkdir;
    ops.symlink = opSymlink;
    ops.link = opLink;
    ops.unlink = opUnlink;
    ops.rmdir = opRmdir;
    ops.rename = opRename;
}

} // namespace leasehold::fsgate::detail
