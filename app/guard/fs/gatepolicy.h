#pragma once

#include <cstdint>
#include <string>
#include <string_view>

// What the filesystem gate asks before it changes the tree, and tells once it has. The gate
// (GateFs) knows files; the policy knows leases. Standard library only, so the gate's tests can
// drive it with a policy of their own.
namespace leasehold::fsgate {

// With GateFs::Options::zeroOpen (the default) the kernel opens files without asking the gate, so
// there is no Open: a file opened for writing is asked at what changes it, its first write (or
// truncation) and each one after. An open with O_TRUNC is a Truncate all the same (the kernel
// sends it as a setattr of the size, before open returns).
enum class ChangeOp {
    Open,      // open for writing (O_WRONLY/O_RDWR) of an existing file; never with zeroOpen
    Truncate,  // open with O_TRUNC, or a size set by setattr
    WriteData, // write, fallocate or the destination of copy_file_range on an open handle
    Create,    // create (open with O_CREAT of a name that does not exist), mknod
    Mkdir,     //
    Symlink,   // `path` is the new link's name
    Link,      // `path` is the existing file, `target` the new name
    Unlink,    //
    Rmdir,     //
    Rename,    // `path` moves to `target` (which may exist: it is replaced)
    Exchange,  // RENAME_EXCHANGE: `path` and `target` swap
    SetAttr,   // mode, owner, times
    Xattr,     // set or remove an extended attribute
};

// "open", "truncate", "write", "create", ...: the operation as the ledger names it.
std::string_view changeOpName(ChangeOp op);

struct Change
{
    ChangeOp op = ChangeOp::Open;
    // Below the gate's root, '/'-separated, no leading or trailing '/'; "" is the root itself.
    std::string path;
    std::string target;           // Rename, Exchange: the other name; Link: the new name
    bool directory = false;       // `path` is a folder (what is below it moves or goes with it)
    bool targetDirectory = false; // Exchange, Rename onto an existing folder: `target` is one
    // Open, Truncate (by open), Create, WriteData: the open handle the change belongs to, so
    // a policy can keep a claim while it is open (closed() ends it). 0 otherwise, except a
    // Truncate by ftruncate() on an open handle, which carries that handle too. Always 0 with
    // zeroOpen: the kernel then tells the gate neither of opens nor of closes (not even of a
    // created file's), so a claim is kept by the changes themselves (each write is asked and
    // done()), not by an open descriptor.
    std::uint64_t handle = 0;
    int pid = 0;         // the calling process, as the kernel reports it: FUSE gives the
                         // calling thread's id (the pid itself for a single-threaded caller);
                         // 0 for a shared mapping's write-back, which the kernel makes itself
    std::string command; // its name (/proc/<pid>/comm), best effort
};

// Called on the gate's worker threads, several at once: implementations are thread-safe.
class GatePolicy
{
public:
    virtual ~GatePolicy() = default;
    // Before `change` is made: 0 lets it happen, any other value is the errno the caller gets
    // (EACCES: someone else's lease). May block, for a bounded time (taking a lease is a round
    // trip to the service); WriteData is asked on every write and must answer from memory.
    virtual int admit(const Change &change) = 0;
    // After an admitted change was made (`error` 0) or failed (its errno).
    virtual void done(const Change &change, int error) = 0;
    // The handle an admitted Open, Truncate or Create belonged to was closed (its last
    // reference released), or the gate stopped serving while it was still open. Never called
    // with zeroOpen (no change carries a handle).
    virtual void closed(std::uint64_t handle) = 0;
};

} // namespace leasehold::fsgate
