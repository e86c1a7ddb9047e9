#include "backingwatch.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace leasehold::fsgate::detail {

namespace {

constexpr std::uint32_t kNameEvents = IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO;
constexpr std::uint32_t kContentEvents = IN_MODIFY | IN_CLOSE_WRITE;
constexpr std::uint32_t kMask =
    kNameEvents | kContentEvents | IN_ATTRIB | IN_ONLYDIR | IN_EXCL_UNLINK;
// A burst is gathered this long after its first event; the gate's own change is recorded by
// then (publish() follows its system call at once).
constexpr auto kSettle = std::chrono::milliseconds(3);
// An event this long after the gate itself changed the same name or file is the gate's own.
constexpr auto kOwnWindow = std::chrono::milliseconds(250);

} // namespace

BackingWatch::BackingWatch(InodeTable &inodes, long limit)
    : m_inodes(inodes)
    , m_limit(limit)
{}

BackingWatch::~BackingWatch()
{
    stop();
}

void BackingWatch::start(fuse_session *session, std::function<void()> namesMoved)
{
    if (m_thread.joinable() || m_limit == 0)
        return;
    m_session = session;
    m_namesMoved = std::move(namesMoved);
    m_fd = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    m_stopFd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (m_fd < 0 || m_stopFd < 0) {
        std::fprintf(stderr, "leasehold gate: no inotify (%s): outside changes show within %s\n",
                     std::strerror(errno), "the short timeouts");
        stop();
        return;
    }
    Inode &root = m_inodes.root();
    const InodeFd fd(m_inodes, root);
    if (!fd.error())
        add(root, fd.fd());
    root.covered = watched(root);
    m_thread = std::thread([this] { loop(); });
}

void BackingWatch::stop()
{
    if (m_thread.joinable()) {
        const std::uint64_t one = 1;
        (void)!::write(m_stopFd, &one, sizeof one);
        m_thread.join();
    }
    if (m_fd >= 0)
        ::close(m_fd);
    if (m_stopFd >= 0)
        ::close(m_stopFd);
    m_fd = m_stopFd = -1;
}

void BackingWatch::add(Inode &dir, int fd)
{
    int expected = 0;
    if (m_fd < 0 || !dir.watch.compare_exchange_strong(expected, -2)) // -2: being added
        return;
    if (m_limit >= 0 && m_count.load() >= m_limit) {
        dir.watch = -1;
        return;
    }
    // The real folder is reachable only through its descriptor (over-mounted in a run).
    char path[40];
    std::snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    const int wd = ::inotify_add_watch(m_fd, path, kMask);
    if (wd < 0) {
        static std::atomic<bool> told{false};
        if (errno == ENOSPC && !told.exchange(true))
            std::fprintf(stderr, "leasehold gate: inotify watch limit reached "
                                 "(fs.inotify.max_user_watches): further folders keep short "
                                 "timeouts\n");
        dir.watch = -1;
        return;
    }
    {
        std::lock_guard lock(m_mutex);
        if (m_folders.try_emplace(wd, dir.key).second)
            ++m_count;
    }
    dir.watch = wd;
}

void BackingWatch::forgotten(int wd)
{
    if (m_fd >= 0)
        ::inotify_rm_watch(m_fd, wd); // IN_IGNORED follows: the thread forgets it then
}

void BackingWatch::own(std::span<const BusItem> items)
{
    if (m_fd < 0)
        return;
    const auto now = Clock::now();
    std::lock_guard lock(m_ownMutex);
    for (const BusItem &item : items) {
        if (item.kind == BusItem::EntryItem)
            m_ownNames[NameKey{item.key, std::string(item.name)}] = now;
        else
            m_ownInodes[item.key] = now;
    }
}

std::size_t BackingWatch::watches()
{
    return static_cast<std::size_t>(m_count.load());
}

bool BackingWatch::ownName(const NameKey &what, Clock::time_point seen)
{
    std::lock_guard lock(m_ownMutex);
    auto it = m_ownNames.find(what);
    return it != m_ownNames.end() && it->second + kOwnWindow >= seen;
}

bool BackingWatch::ownInode(const InodeKey &key, Clock::time_point seen)
{
    std::lock_guard lock(m_ownMutex);
    auto it = m_ownInodes.find(key);
    return it != m_ownInodes.end() && it->second + kOwnWindow >= seen;
}

void BackingWatch::loop()
{
    pollfd fds[2] = {{m_fd, POLLIN, 0}, {m_stopFd, POLLIN, 0}};
    std::unordered_map<NameKey, Pending, NameKeyHash> pending;
    for (;;) {
        if (::poll(fds, 2, -1) < 0 && errno != EINTR)
            return;
        if (fds[1].revents & POLLIN)
            return;
        bool overflow = false;
        readEvents(pending, overflow);
        std::this_thread::sleep_for(kSettle);
        readEvents(pending, overflow);
        if (overflow)
            dropEverything();
        for (const auto &[what, event] : pending)
            apply(what, event);
        pending.clear();
        const auto old = Clock::now() - kOwnWindow;
        std::lock_guard lock(m_ownMutex);
        if (m_ownNames.size() > 256)
            std::erase_if(m_ownNames, [&](const auto &e) { return e.second < old; });
        if (m_ownInodes.size() > 256)
            std::erase_if(m_ownInodes, [&](const auto &e) { return e.second < old; });
    }
}

void BackingWatch::readEvents(std::unordered_map<NameKey, Pending, NameKeyHash> &pending,
                              bool &overflow)
{
    alignas(inotify_event) char buffer[64 * 1024];
    for (;;) {
        const ssize_t n = ::read(m_fd, buffer, sizeof buffer);
        if (n <= 0)
            return;
        const auto now = Clock::now();
        for (ssize_t at = 0; at < n;) {
            inotify_event event;
            std::memcpy(&event, buffer + at, sizeof event);
            const char *name = buffer + at + sizeof event;
            at += static_cast<ssize_t>(sizeof event + event.len);
            if (event.mask & IN_Q_OVERFLOW) {
                overflow = true;
                continue;
            }
            InodeKey folder;
            {
                std::lock_guard lock(m_mutex);
                auto it = m_folders.find(event.wd);
                if (it == m_folders.end())
                    continue;
                folder = it->second;
                if (event.mask & IN_IGNORED) {
                    m_folders.erase(it);
                    --m_count;
                }
            }
            if (event.mask & IN_IGNORED) {
                m_inodes.unwatched(folder, event.wd);
                continue;
            }
            NameKey what{folder, event.len ? std::string(name) : std::string()};
            auto [it, fresh] = pending.try_emplace(std::move(what));
            if (fresh)
                it->second.seen = now;
            it->second.mask |= event.mask;
        }
    }
}

// A number forgotten meanwhile is unknown to the kernel (ENOENT): harmless.
void BackingWatch::apply(const NameKey &what, const Pending &event)
{
    const fuse_ino_t dir = m_inodes.find(what.dir);
    if (dir == 0)
        return;
    if (what.name.empty()) { // the folder itself
        if (event.mask & (IN_ATTRIB | IN_MODIFY))
            fuse_lowlevel_notify_inval_inode(m_session, dir, -1, 0);
        return;
    }
    // A name the gate itself just made, removed, moved or wrote: the kernel knows already.
    if (ownName(what, event.seen))
        return;
    if (event.mask & kNameEvents) {
        m_namesMoved();
        // libfuse sends the terminating NUL too: name is a std::string.
        fuse_lowlevel_notify_inval_entry(m_session, dir, what.name.c_str(), what.name.size());
        fuse_lowlevel_notify_inval_inode(m_session, dir, 0, 0); // its cached listing
    }
    if (!(event.mask & (kContentEvents | IN_ATTRIB)))
        return;
    const int dirFd = m_inodes.dupFd(what.dir);
    struct stat st = {};
    const bool found =
        dirFd >= 0 && ::fstatat(dirFd, what.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
    if (dirFd >= 0)
        ::close(dirFd);
    if (!found)
        return;
    const InodeKey key = keyOf(st);
    // The gate's own write: the kernel already dropped the attributes it changed, and its pages
    // are what was written. Anyone else's: the pages go too (close-to-open sees it as well).
    const bool own = ownInode(key, event.seen);
    const bool content = (event.mask & kContentEvents) && !own;
    const fuse_ino_t ino = content ? m_inodes.noteRemoteChange(key) : m_inodes.find(key);
    if (ino != 0)
        fuse_lowlevel_notify_inval_inode(m_session, ino, content ? 0 : -1, 0);
}

// Events were lost: every attribute, page and known name goes (negative entries stay until
// their timeout).
void BackingWatch::dropEverything()
{
    std::fprintf(stderr, "leasehold gate: inotify queue overflowed: dropping every cache\n");
    m_namesMoved();
    fuse_lowlevel_notify_inval_inode(m_session, FUSE_ROOT_ID, 0, 0);
    for (const InodeTable::Known &known : m_inodes.known()) {
        fuse_lowlevel_notify_inval_inode(m_session, known.ino, 0, 0);
        if (known.parent != 0)
            fuse_lowlevel_notify_inval_entry(m_session, known.parent, known.name.c_str(),
                                             known.name.size());
    }
}

} // namespace leasehold::fsgate::detail
