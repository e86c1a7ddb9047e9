#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>

// GateFs: the filesystem gate. A FUSE passthrough (libfuse3, low-level API) mounted over a
// workspace so that every change any program makes below it is first asked of a GatePolicy and
// refused, having changed nothing, with the errno the policy gives (EACCES: another agent's
// lease). Reads, stats and listings pass through unasked.
//
// Lifecycle: construct, mount() (mounts and returns; the kernel queues requests), run() on one
// thread (serves on a pool of worker threads until unmounted or stopped), stop() from anywhere.
// The process that mounts must never touch the mounted tree itself, nor fork children that do
// while it serves (they would be served by the threads they wait on): `leasehold run` forks the
// gate into its own process first, waits for onReady, then starts the agent.
//
// Caching and coherence: the kernel caches attributes, names (positive and negative) and pages
// for the timeouts below: watchedTimeout where an inotify watch on the backing folder sees every
// change, else ~1 s. Changes made through this gate are seen by it at once. Changes
// made through another gate over the same backing folder are pushed here by the coherence bus
// before that gate replies, so they are seen at once too (one exception: a name changed while
// this gate is itself changing the same folder is dropped here as soon as that operation ends,
// after at most 5 ms of waiting; see GateCore::applyRemote). Changes made outside every gate (the
// backing folder written directly) are seen at once where the backing folder is watched (see
// BackingWatch), else once the attribute and entry timeouts run out, and file contents at the
// first read after that (the kernel compares mtime and size; with zeroOpen off, at the next
// open, close-to-open).
//
// Thread-safety: stop() may be called from any thread or a signal handler; everything else
// from the owning thread. The policy is called from worker threads, several at once.
namespace leasehold::fsgate {

class GatePolicy;
namespace detail {
class GateCore;
}

class GateFs
{
public:
    struct Options
    {
        std::string mountPoint;
        // The real folder, opened by the caller with O_PATH | O_DIRECTORY *before* the gate is
        // mounted over it (in production both are the same path). The gate keeps a dup; the
        // caller may close its own after mount().
        int backingFd = -1;
        // The root's path as agents know it, for naming the mount; default: the backing path.
        std::string rootPath;
        int threads = 8;     // at most this many workers (fuse_session_loop_mt)
        bool cloneFd = true; // one /dev/fuse descriptor per worker
        double attrTimeout = 1.0;
        double entryTimeout = 1.0;
        double negativeTimeout = 1.0;
        // The three timeouts where an inotify watch of the backing folder sees every change
        // made outside (BackingWatch): the entry's folder is watched, and for attributes the
        // file has one link. They bound only what inotify misses (a network file system's other
        // clients).
        double watchedTimeout = 30.0;
        // inotify watches, one per folder the kernel knows, at most; past it (or past
        // fs.inotify.max_user_watches) folders keep the short timeouts. -1: the kernel's limit;
        // 0: no watching (what a full max_user_watches looks like).
        long maxWatches = -1;
        int allowOther = -1; // -1: when running as root
        // The kernel checks permissions against the attributes it has (default_permissions).
        // Off, every request would run with the gate's credentials, which is only safe when no
        // process of another user can reach the mount: kept for the benchmark's comparison (a
        // create in a folder costs the folder's GETATTR at the next lookup in it, because the
        // kernel drops the folder's attributes after each change).
        bool defaultPermissions = true;
        bool autoUnmount = true; // fusermount3 unmounts if the gate's process dies
        bool debug = false;      // libfuse's request log, and refusals, on stderr
        std::string fsName;      // default "leasehold:<rootPath>"
        std::string subtype = "leasehold";
        std::string busDirectory; // "": per root under /run/leasehold; "-": no coherence bus
        int busAckTimeoutMs = 100;
        bool readdirPlus = true;
        bool readdirPlusAuto = true; // the kernel picks plain readdir when it needs no stats
        // The kernel keeps folder listings (until the folder's mtime moves or another gate
        // invalidates them) and opens folders without asking: git status opens every folder,
        // and that halved its cost. Nothing of a folder's opening is gated.
        bool cacheReaddir = true;
        bool splice = false; // measured slower for this workload: one more syscall per request
        // Zero-open: the kernel opens and closes files without a round trip (open answers
        // ENOSYS once, FUSE_CAP_NO_OPEN_SUPPORT), which halves what `git grep` and a compile
        // cost: each file read cost an open and a release. The gating stays complete, because
        // nothing changes a file at open: a truncating open reaches the policy as Truncate (by
        // setattr; the kernel no longer truncates inside open), each write, fallocate and copy
        // as WriteData, before it is made. What the policy sees differs (gatepolicy.h): no Open
        // (a file opened for writing is asked at its first write), and a write, truncation or
        // ftruncate on a file opened, not created, carries no handle (0), so no closed() follows
        // it; a created file keeps its handle and closed() as before. Changes made outside
        // every gate reach file contents at the first read after the attribute timeout (the
        // kernel compares mtime and size) instead of at the next open. false: open and release
        // round trips, handles on every open for writing.
        bool zeroOpen = true;
        // Lookups and listings in one folder may run at once (FUSE_CAP_PARALLEL_DIROPS; changes
        // to a folder stay serialised by the kernel's folder lock either way).
        bool parallelDirops = false;
        // false: getxattr and listxattr answer ENOSYS once and the kernel stops asking. Else every
        // write() costs one more round trip, the kernel's security.capability check (FUSE never
        // marks inodes S_NOSEC): 201 GETXATTR for 200 writes, measured. Setting and removing
        // attributes pass through (gated) either way.
        bool readXattrs = false;
        // O_PATH descriptors kept on known inodes at most; colder ones are closed and reopened
        // by name when used again. 0: three quarters of RLIMIT_NOFILE (raised first).
        std::size_t maxInodeFds = 0;
        // Called once, on a worker thread, when the kernel opened the connection (INIT).
        std::function<void()> onReady;
    };

    GateFs(Options options, GatePolicy &policy);
    GateFs(const GateFs &) = delete;
    GateFs &operator=(const GateFs &) = delete;
    ~GateFs(); // unmounts if still mounted

    // Joins the coherence bus and mounts. Raises RLIMIT_NOFILE (descriptors on known inodes, see
    // maxInodeFds) and sets the process umask to 0 (the kernel applies the caller's). False with
    // `error` set if not.
    bool mount(std::string *error);
    // Serves until unmounted (fusermount3 -u, umount) or stop(); 0 on a clean end.
    int run();
    // Async-signal-safe: unmounts (lazily) and makes run() return. If processes keep using the
    // detached mount past two seconds, the workers are cancelled and the connection closed
    // (they get ENOTCONN); run() wakes for that through a real-time signal, SIGRTMIN+4, which
    // GateFs handles (with a no-op) unless the process already does.
    void stop();

    bool isReady() const { return m_ready.load(); }
    // Inodes the kernel knows, and how many of them hold an open O_PATH descriptor now.
    std::size_t inodeCount() const;
    std::size_t inodeFds() const;

private:
    struct Session;
    void controlLoop();
    void beginStop();

    Options m_options;
    GatePolicy &m_policy;
    std::unique_ptr<detail::GateCore> m_core;
    std::unique_ptr<Session> m_session;
    int m_stopFd = -1;             // eventfd: stop() writes it
    int m_loopDoneFd = -1;         // eventfd: run() writes it when the loop returned
    unsigned long m_runThread = 0; // pthread_t of run(), for the forced stop
    std::atomic<bool> m_ready{false};
};

} // namespace leasehold::fsgate
