#include "gatefs.h"

#include "gatecore.h"
#include "mountcontrol.h"

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <thread>

namespace leasehold::fsgate {

using namespace detail;

struct GateFs::Session
{
    fuse_session *se = nullptr;
    std::string mountPoint; // canonical
    bool haveDevice = false;
    unsigned major = 0;
    unsigned minor = 0;
    bool mounted = false;
    std::atomic<bool> detached{false};
};

namespace {

constexpr auto kStopGrace = std::chrono::seconds(2);

void opInit(void *userdata, fuse_conn_info *conn)
{
    GateCore &gate = *static_cast<GateCore *>(userdata);
    const GateSettings &s = gate.settings();
    // Writeback caching batches small writes past the policy and was measured slower here.
    conn->want &= ~FUSE_CAP_WRITEBACK_CACHE;
    conn->want &= ~FUSE_CAP_EXPORT_SUPPORT;
    // The gate writes as root, so the backing file system would not clear set-user-ID bits on a
    // write: let the kernel do it (a setattr, asked of the policy like any other).
    conn->want &= ~FUSE_CAP_HANDLE_KILLPRIV;
    constexpr unsigned kSplice =
        FUSE_CAP_SPLICE_READ | FUSE_CAP_SPLICE_WRITE | FUSE_CAP_SPLICE_MOVE;
    if (s.splice)
        conn->want |= conn->capable & kSplice;
    else
        conn->want &= ~kSplice; // splicing requests in costs a second system call per request
    // Symlinks are never changed in place (only replaced), so their targets may be cached.
    conn->want |= conn->capable & FUSE_CAP_CACHE_SYMLINKS;
    // Folders are opened without a round trip (opendir answers ENOSYS once, and the kernel then
    // keeps listings cached until the folder's mtime moves or it is invalidated): opening a
    // folder changes nothing, and `git status` opens every one.
    gate.zeroOpendir = s.cacheReaddir && (conn->capable & FUSE_CAP_NO_OPENDIR_SUPPORT);
    // Files are opened without a round trip (Options::zeroOpen). The kernel must then never
    // assume that open truncated (atomic_o_trunc): it would skip the truncation, and the setattr
    // the policy is asked through. Contents changed outside are caught when the kernel
    // refreshes attributes before a read (auto_inval_data): nothing is checked at open.
    gate.zeroOpen = s.zeroOpen && (conn->capable & FUSE_CAP_NO_OPEN_SUPPORT);
    if (gate.zeroOpen) {
        conn->want &= ~FUSE_CAP_ATOMIC_O_TRUNC;
        conn->want |= conn->capable & FUSE_CAP_AUTO_INVAL_DATA;
    }
    if (s.parallelDirops)
        conn->want |= conn->capable & FUSE_CAP_PARALLEL_DIROPS;
    else
        conn->want &= ~FUSE_CAP_PARALLEL_DIROPS;
    if (!s.readdirPlus)
        conn->want &= ~(FUSE_CAP_READDIRPLUS | FUSE_CAP_READDIRPLUS_AUTO);
    else if (!s.readdirPlusAuto)
        conn->want &= ~FUSE_CAP_READDIRPLUS_AUTO;
    if (gate.onInit)
        gate.onInit(conn);
}

// fuse_opt splits on commas: escape them (and the escape) in values.
std::string optionValue(const std::string &value)
{
    std::string out;
    for (char c : value) {
        if (c == ',' || c == '\\')
            out += '\\';
        out += c;
    }
    return out;
}

void raiseFileLimit()
{
    struct rlimit limit = {};
    if (::getrlimit(RLIMIT_NOFILE, &limit) != 0)
        return;
    if (::geteuid() == 0) {
        rlim_t most = 1 << 20;
        std::ifstream nrOpen("/proc/sys/fs/nr_open");
        unsigned long long n = 0;
        if (nrOpen >> n && n > 0)
            most = static_cast<rlim_t>(n);
        if (limit.rlim_max < most)
            limit.rlim_max = most;
    }
    limit.rlim_cur = limit.rlim_max;
    if (::setrlimit(RLIMIT_NOFILE, &limit) != 0) {
        ::getrlimit(RLIMIT_NOFILE, &limit);
        limit.rlim_cur = limit.rlim_max;
        ::setrlimit(RLIMIT_NOFILE, &limit);
    }
}

void wakeOnly(int) {}

// The signal that interrupts fuse_session_loop_mt's wait (sem_wait is never restarted).
int wakeSignal()
{
    const int signal = SIGRTMIN + 4;
    struct sigaction old = {};
    if (::sigaction(signal, nullptr, &old) == 0 &&
        (old.sa_handler == SIG_DFL || old.sa_handler == SIG_IGN)) {
        struct sigaction sa = {};
        sa.sa_handler = wakeOnly;
        sigemptyset(&sa.sa_mask);
        ::sigaction(signal, &sa, nullptr);
    }
    return signal;
}

bool failWith(std::string *error, std::string text)
{
    if (error)
        *error = std::move(text);
    return false;
}

} // namespace

GateFs::GateFs(Options options, GatePolicy &policy)
    : m_options(std::move(options))
    , m_policy(policy)
    , m_session(std::make_unique<Session>())
{
    m_stopFd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    m_loopDoneFd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
}

GateFs::~GateFs()
{
    if (m_session->se) {
        if (m_session->mounted && !m_session->detached)
            fuse_session_unmount(m_session->se);
        fuse_session_destroy(m_session->se);
    }
    m_core.reset();
    ::close(m_stopFd);
    ::close(m_loopDoneFd);
}

bool GateFs::mount(std::string *error)
{
    if (m_session->se)
        return failWith(error, "already mounted");
    if (m_options.backingFd < 0)
        return failWith(error, "no backing folder");
    const int rootFd = ::fcntl(m_options.backingFd, F_DUPFD_CLOEXEC, 3);
    struct stat st = {};
    if (rootFd == -1 || ::fstat(rootFd, &st) == -1 || !S_ISDIR(st.st_mode)) {
        if (rootFd != -1)
            ::close(rootFd);
        return failWith(error, "the backing fd is not a folder");
    }
    raiseFileLimit();
    ::umask(0);

    GateSettings settings;
    settings.attrTimeout = m_options.attrTimeout;
    settings.entryTimeout = m_options.entryTimeout;
    settings.negativeTimeout = m_options.negativeTimeout;
    settings.watchedTimeout = m_options.watchedTimeout;
    settings.maxWatches = m_options.maxWatches;
    settings.cacheReaddir = m_options.cacheReaddir;
    settings.readdirPlus = m_options.readdirPlus;
    settings.readdirPlusAuto = m_options.readdirPlusAuto;
    settings.readXattrs = m_options.readXattrs;
    settings.splice = m_options.splice;
    settings.zeroOpen = m_options.zeroOpen;
    settings.parallelDirops = m_options.parallelDirops;
    settings.debug = m_options.debug;
    settings.fixOwners = ::geteuid() == 0;
    settings.fdBudget = m_options.maxInodeFds;
    m_core = std::make_unique<GateCore>(settings, m_policy, rootFd);
    m_core->onInit = [this](fuse_conn_info *) {
        m_ready = true;
        if (m_options.onReady)
            m_options.onReady();
    };
    if (m_core->namer().rootPath().empty())
        return failWith(error, "cannot read the backing folder's path");

    if (m_options.busDirectory != "-") {
        const std::string directory = m_options.busDirectory.empty()
                                          ? CoherenceBus::defaultDirectory(keyOf(st))
                                          : m_options.busDirectory;
        if (!m_core->joinBus(directory, m_options.busAckTimeoutMs, error))
            return false;
    }

    char *real = ::realpath(m_options.mountPoint.c_str(), nullptr);
    if (!real)
        return failWith(error, "mount point " + m_options.mountPoint + ": " + std::strerror(errno));
    m_session->mountPoint = real;
    ::free(real);

    const std::string root =
        m_options.rootPath.empty() ? m_core->namer().rootPath() : m_options.rootPath;
    std::string opts =
        "fsname=" + optionValue(m_options.fsName.empty() ? "leasehold:" + root : m_options.fsName) +
        ",subtype=" + optionValue(m_options.subtype);
    if (m_options.defaultPermissions)
        opts += ",default_permissions";
    const bool allowOther = m_options.allowOther < 0 ? ::geteuid() == 0 : m_options.allowOther != 0;
    if (allowOther)
        opts += ",allow_other";
    if (m_options.autoUnmount)
        opts += ",auto_unmount";

    fuse_args args = FUSE_ARGS_INIT(0, nullptr);
    fuse_opt_add_arg(&args, "leasehold-gate");
    fuse_opt_add_arg(&args, "-o");
    fuse_opt_add_arg(&args, opts.c_str());
    if (m_options.debug)
        fuse_opt_add_arg(&args, "-odebug");
    fuse_lowlevel_ops ops{};
    addEntryOperations(ops);
    addFileOperations(ops);
    addDirOperations(ops);
    ops.init = opInit;
    if (!m_options.readdirPlus)
        ops.readdirplus = nullptr;
    m_session->se = fuse_session_new(&args, &ops, sizeof ops, m_core.get());
    fuse_opt_free_args(&args);
    if (!m_session->se)
        return failWith(error, "fuse_session_new failed (options: " + opts + ")");
    m_core->setSession(m_session->se);
    if (fuse_session_mount(m_session->se, m_session->mountPoint.c_str()) != 0) {
        fuse_session_destroy(m_session->se);
        m_session->se = nullptr;
        return failWith(error, "cannot mount on " + m_session->mountPoint +
                                   " (libfuse said why on stderr)");
    }
    m_session->mounted = true;
    if (const auto top = topMountAt(m_session->mountPoint);
        top && top->fsType.starts_with("fuse")) {
        m_session->haveDevice = true;
        m_session->major = top->major;
        m_session->minor = top->minor;
    }
    return true;
}

int GateFs::run()
{
    fuse_session *se = m_session->se;
    if (!se || !m_session->mounted)
        return -1;
    static_assert(sizeof(pthread_t) <= sizeof m_runThread);
    m_runThread = static_cast<unsigned long>(::pthread_self());
    wakeSignal();
    m_core->startInvalidator();
    m_core->startWatch();
    std::thread control([this] { controlLoop(); });
    fuse_loop_config *config = fuse_loop_cfg_create();
    fuse_loop_cfg_set_clone_fd(config, m_options.cloneFd ? 1 : 0);
    fuse_loop_cfg_set_max_threads(config, static_cast<unsigned>(std::max(1, m_options.threads)));
    const int rc = fuse_session_loop_mt(se, config);
    fuse_loop_cfg_destroy(config);
    const std::uint64_t one = 1;
    (void)!::write(m_loopDoneFd, &one, sizeof one);
    control.join();
    m_core->watch().stop();
    m_core->stopInvalidator();
    m_core->releaseAll(); // files whose release the ended connection will never send
    if (m_core->bus())
        m_core->bus()->leave(); // nobody drains it any more
    // After our own detach the path may name another mount (the real folder): libfuse must not
    // unmount it. An unattached /dev/fuse descriptor put in place of the session's polls
    // POLLERR, which libfuse reads as "already unmounted"; closing the original (no worker
    // reads it any more) ends the connection if processes still held the detached mount.
    if (m_session->detached) {
        const int blank = ::open("/dev/fuse", O_RDWR | O_CLOEXEC);
        if (blank >= 0 && ::dup2(blank, fuse_session_fd(se)) != -1)
            fuse_session_unmount(se);
        if (blank >= 0)
            ::close(blank);
    } else {
        fuse_session_unmount(se);
    }
    m_session->mounted = false;
    return rc;
}

void GateFs::stop()
{
    const std::uint64_t one = 1;
    (void)!::write(m_stopFd, &one, sizeof one);
}

std::size_t GateFs::inodeCount() const
{
    return m_core ? m_core->inodes().size() : 0;
}

std::size_t GateFs::inodeFds() const
{
    return m_core ? m_core->inodes().residentFds() : 0;
}

void GateFs::beginStop()
{
    fuse_session_exit(m_session->se);
    // Once detached and idle the super block goes, the connection with it, and the workers'
    // reads end with ENODEV: that is what makes the loop return.
    if (m_session->haveDevice &&
        detachMount(m_session->mountPoint, m_session->major, m_session->minor))
        m_session->detached = true;
}

void GateFs::controlLoop()
{
    CoherenceBus *bus = m_core->bus();
    pollfd fds[3] = {
        {m_stopFd, POLLIN, 0}, {m_loopDoneFd, POLLIN, 0}, {bus ? bus->fd() : -1, POLLIN, 0}};
    bool stopping = false;
    bool aborted = false;
    auto deadline = std::chrono::steady_clock::now();
    for (;;) {
        int timeout = -1;
        if (stopping && !aborted) {
            const auto left = std::chrono::ceil<std::chrono::milliseconds>(
                deadline - std::chrono::steady_clock::now());
            timeout = static_cast<int>(std::max<std::int64_t>(0, left.count()));
        }
        const int r = ::poll(fds, 3, timeout);
        if (r < 0 && errno != EINTR)
            return;
        if (fds[1].revents & POLLIN)
            return;
        if (fds[2].revents & POLLIN)
            bus->drain([this](std::span<const BusItem> items) { m_core->applyRemote(items); });
        if (fds[0].revents & POLLIN) {
            std::uint64_t count = 0;
            (void)!::read(m_stopFd, &count, sizeof count);
            if (!stopping) {
                stopping = true;
                deadline = std::chrono::steady_clock::now() + kStopGrace;
                beginStop();
            }
        }
        if (stopping && !aborted && std::chrono::steady_clock::now() >= deadline) {
            // Still busy (a process keeps a folder open): sever the connection. Without fusectl,
            // wake run(): the loop then cancels its workers, and closing the last /dev/fuse
            // descriptor ends the connection.
            aborted = true;
            if (m_session->haveDevice)
                abortConnection(m_session->minor);
            ::pthread_kill(static_cast<pthread_t>(m_runThread), wakeSignal());
        }
    }
}

} // namespace leasehold::fsgate
