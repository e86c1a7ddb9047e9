#include "coherencebus.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>

namespace leasehold::fsgate::detail {

namespace {

constexpr std::uint32_t kMagic = 0x4C484742; // "LHGB"
constexpr std::uint16_t kVersion = 1;
constexpr std::uint16_t kInvalidate = 1;
constexpr std::uint16_t kAck = 2;
constexpr std::size_t kMapSize = 4096;
constexpr std::size_t kMaxMessage = 4096;
constexpr std::string_view kSuffix = ".sock";

struct WireHeader
{
    std::uint32_t magic;
    std::uint16_t version;
    std::uint16_t kind;
    std::uint64_t gate; // the sender's id
    std::uint64_t seq;
    std::uint32_t count;
    std::uint32_t reserved;
};

struct WireItem
{
    std::uint8_t kind;
    std::uint8_t reserved;
    std::uint16_t nameLength;
    std::uint32_t reserved2;
    std::uint64_t dev;
    std::uint64_t ino;
};

constexpr std::size_t padded(std::size_t n)
{
    return (n + 7) & ~std::size_t(7);
}

std::size_t encode(char *out, std::uint16_t kind, std::uint64_t gate, std::uint64_t seq,
                   std::span<const BusItem> items)
{
    WireHeader h{kMagic, kVersion, kind, gate, seq, static_cast<std::uint32_t>(items.size()), 0};
    std::memcpy(out, &h, sizeof h);
    std::size_t at = sizeof h;
    for (const BusItem &item : items) {
        const std::size_t nameLength = std::min<std::size_t>(item.name.size(), 255);
        if (at + sizeof(WireItem) + padded(nameLength) > kMaxMessage)
            break; // never with the gate's messages: at most 8 items of one name each
        WireItem w{item.kind,    0,           static_cast<std::uint16_t>(nameLength), 0,
                   item.key.dev, item.key.ino};
        std::memcpy(out + at, &w, sizeof w);
        if (nameLength > 0)
            std::memcpy(out + at + sizeof w, item.name.data(), nameLength);
        at += sizeof w + padded(nameLength);
    }
    return at;
}

bool decodeHeader(const char *data, std::size_t size, WireHeader &h)
{
    if (size < sizeof h)
        return false;
    std::memcpy(&h, data, sizeof h);
    return h.magic == kMagic && h.version == kVersion;
}

bool decodeItems(const char *data, std::size_t size, const WireHeader &h,
                 std::vector<BusItem> &items)
{
    std::size_t at = sizeof(WireHeader);
    for (std::uint32_t i = 0; i < h.count; ++i) {
        WireItem w;
        if (at + sizeof w > size)
            return false;
        std::memcpy(&w, data + at, sizeof w);
        if (at + sizeof w + w.nameLength > size)
            return false;
        BusItem item;
        item.kind = w.kind == BusItem::EntryItem ? BusItem::EntryItem : BusItem::InodeItem;
        item.key = {w.dev, w.ino};
        item.name = std::string_view(data + at + sizeof w, w.nameLength);
        items.push_back(item);
        at += sizeof w + padded(w.nameLength);
    }
    return true;
}

int makeDirectories(const std::string &path)
{
    for (std::size_t at = 1; at <= path.size(); ++at) {
        if (at != path.size() && path[at] != '/')
            continue;
        const std::string prefix = path.substr(0, at);
        if (::mkdir(prefix.c_str(), 0700) == -1 && errno != EEXIST)
            return errno;
    }
    return 0;
}

bool fillAddress(sockaddr_un &addr, socklen_t &length, const std::string &path)
{
    std::memset(&addr, 0, sizeof addr);
    addr.sun_family = AF_UNIX;
    if (path.size() >= sizeof addr.sun_path)
        return false;
    std::memcpy(addr.sun_path, path.data(), path.size());
    length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + path.size() + 1);
    return true;
}

} // namespace

CoherenceBus::~CoherenceBus()
{
    leave();
}

std::string CoherenceBus::defaultDirectory(const InodeKey &root)
{
    std::string base;
    if (::geteuid() == 0) {
        base = "/run/leasehold/gates";
    } else if (const char *runtime = std::getenv("XDG_RUNTIME_DIR"); runtime && *runtime) {
        base = std::string(runtime) + "/leasehold/gates";
    } else {
        base = "/tmp/leasehold-" + std::to_string(::geteuid()) + "/gates";
    }
    char key[48];
    std::snprintf(key, sizeof key, "/%llx-%llx", static_cast<unsigned long long>(root.dev),
                  static_cast<unsigned long long>(root.ino));
    return base + key;
}

bool CoherenceBus::join(const std::string &directory, std::chrono::milliseconds ackTimeout,
                        std::string *error)
{
    auto fail = [&](const char *what, int code) {
        if (error)
            *error = std::string("coherence bus: ") + what + " " + directory + ": " +
                     std::strerror(code);
        leave();
        return false;
    };
    m_ackTimeout = ackTimeout;
    if (const int e = makeDirectories(directory))
        return fail("cannot create", e);
    m_dirFd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (m_dirFd == -1)
        return fail("cannot open", errno);
    const int epochFd = ::openat(m_dirFd, "epoch", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (epochFd == -1)
        return fail("cannot open the epoch in", errno);
    struct stat st = {};
    if (::fstat(epochFd, &st) == 0 && st.st_size < static_cast<off_t>(kMapSize))
        (void)::ftruncate(epochFd, kMapSize); // two gates racing here both set the same size
    m_map = ::mmap(nullptr, kMapSize, PROT_READ | PROT_WRITE, MAP_SHARED, epochFd, 0);
    const int mapError = errno;
    ::close(epochFd);
    if (m_map == MAP_FAILED) {
        m_map = nullptr;
        return fail("cannot map the epoch in", mapError);
    }
    std::random_device random;
    m_id = (std::uint64_t(random()) << 32) ^ random();
    char name[64];
    std::snprintf(name, sizeof name, "%d-%016llx", static_cast<int>(::getpid()),
                  static_cast<unsigned long long>(m_id));
    m_ownName = std::string(name) + std::string(kSuffix);
    m_socket = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (m_socket == -1)
        return fail("no socket for", errno);
    sockaddr_un addr;
    socklen_t length = 0;
    if (!fillAddress(addr, length, peerAddress(m_ownName)))
        return fail("address too long for", ENAMETOOLONG);
    if (::bind(m_socket, reinterpret_cast<sockaddr *>(&addr), length) == -1)
        return fail("cannot bind in", errno);
    // Bound before announced, announced before mounted: see the header.
    bumpEpoch();
    return true;
}

void CoherenceBus::leave()
{
    if (m_socket >= 0) {
        ::unlinkat(m_dirFd, m_ownName.c_str(), 0);
        ::close(m_socket);
        m_socket = -1;
        bumpEpoch();
    }
    for (int fd : m_replySockets)
        ::close(fd);
    m_replySockets.clear();
    if (m_map) {
        ::munmap(m_map, kMapSize);
        m_map = nullptr;
    }
    if (m_dirFd >= 0) {
        ::close(m_dirFd);
        m_dirFd = -1;
    }
}

std::uint64_t CoherenceBus::epoch() const
{
    return std::atomic_ref<std::uint64_t>(*static_cast<std::uint64_t *>(m_map)).load();
}

void CoherenceBus::bumpEpoch()
{
    if (m_map)
        std::atomic_ref<std::uint64_t>(*static_cast<std::uint64_t *>(m_map)).fetch_add(1);
}

std::string CoherenceBus::peerAddress(const std::string &name) const
{
    // Through the folder's fd: short whatever the folder's path, and unaffected by renames.
    return "/proc/self/fd/" + std::to_string(m_dirFd) + "/" + name;
}

void CoherenceBus::rescan()
{
    const int fd = ::openat(m_dirFd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *dir = fd == -1 ? nullptr : ::fdopendir(fd);
    if (!dir) {
        if (fd != -1)
            ::close(fd);
        return;
    }
    std::vector<Peer> next;
    while (const dirent *e = ::readdir(dir)) {
        const std::string_view name(e->d_name);
        if (!name.ends_with(kSuffix) || name == m_ownName)
            continue;
        auto known = std::find_if(m_peers.begin(), m_peers.end(),
                                  [&](const Peer &p) { return p.name == name; });
        if (known != m_peers.end() && !known->dead) {
            next.push_back(std::move(*known));
            continue;
        }
        Peer peer;
        peer.name = std::string(name);
        const auto dash = name.find('-');
        if (dash != std::string_view::npos)
            peer.id = std::strtoull(peer.name.c_str() + dash + 1, nullptr, 16);
        next.push_back(std::move(peer));
    }
    ::closedir(dir);
    m_peers = std::move(next);
}

int CoherenceBus::takeReplySocket()
{
    {
        std::lock_guard lock(m_mutex);
        if (!m_replySockets.empty()) {
            const int fd = m_replySockets.back();
            m_replySockets.pop_back();
            return fd;
        }
    }
    const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd == -1)
        return -1;
    sockaddr_un addr = {};
    addr.sun_family = AF_UNIX;
    // Autobind: a unique abstract address the peers answer to.
    if (::bind(fd, reinterpret_cast<sockaddr *>(&addr), sizeof(sa_family_t)) == -1) {
        ::close(fd);
        return -1;
    }
    return fd;
}

void CoherenceBus::giveReplySocket(int fd)
{
    std::lock_guard lock(m_mutex);
    m_replySockets.push_back(fd);
}

void CoherenceBus::publish(std::span<const BusItem> items)
{
    if (!m_map || items.empty())
        return;
    const std::uint64_t now = epoch(); // after the change: see the header
    std::uint64_t seq = 0;
    {
        std::lock_guard lock(m_mutex);
        if (now != m_seenEpoch) {
            m_seenEpoch = now;
            rescan();
        }
        if (m_peers.empty())
            return;
        seq = ++m_seq;
    }
    const int fd = takeReplySocket();
    if (fd == -1)
        return;
    char message[kMaxMessage];
    const std::size_t size = encode(message, kInvalidate, m_id, seq, items);
    std::vector<std::uint64_t> waitFor;
    bool probing = false; // a peer that lagged before is waited for again
    sendAll(message, size, fd, waitFor, probing);
    const std::vector<std::uint64_t> asked = probing ? waitFor : std::vector<std::uint64_t>{};
    if (!waitFor.empty())
        waitForAcks(fd, seq, waitFor);
    if (!waitFor.empty())
        markLagging(waitFor);
    if (probing)
        forgiveLagging(asked, waitFor);
    giveReplySocket(fd);
}

std::size_t CoherenceBus::sendAll(const char *data, std::size_t size, int from,
                                  std::vector<std::uint64_t> &waitFor, bool &probing)
{
    const auto now = std::chrono::steady_clock::now();
    std::size_t sent = 0;
    bool removed = false;
    std::lock_guard lock(m_mutex);
    for (Peer &peer : m_peers) {
        sockaddr_un addr;
        socklen_t length = 0;
        if (!fillAddress(addr, length, peerAddress(peer.name)))
            continue;
        const ssize_t r = ::sendto(from, data, size, MSG_DONTWAIT | MSG_NOSIGNAL,
                                   reinterpret_cast<sockaddr *>(&addr), length);
        if (r >= 0) {
            ++sent;
            if (peer.laggingUntil <= now) {
                waitFor.push_back(peer.id);
                probing = probing || peer.backoff.count() != 0;
            }
        } else if (errno == ECONNREFUSED || errno == ENOENT || errno == ENOTSOCK) {
            // Its gate died without leaving (ECONNREFUSED: nobody bound to the file).
            if (errno == ECONNREFUSED)
                ::unlinkat(m_dirFd, peer.name.c_str(), 0);
            peer.dead = true;
            removed = true;
        } else if (errno == EAGAIN || errno == ENOBUFS) {
            peer.backoff = std::max(peer.backoff, std::chrono::milliseconds(1000));
            peer.laggingUntil = now + peer.backoff;
        }
    }
    if (removed) {
        std::erase_if(m_peers, [](const Peer &p) { return p.dead; });
        bumpEpoch();
    }
    return sent;
}

void CoherenceBus::waitForAcks(int fd, std::uint64_t seq, std::vector<std::uint64_t> &waitFor)
{
    const auto deadline = std::chrono::steady_clock::now() + m_ackTimeout;
    char buf[256];
    while (!waitFor.empty()) {
        const auto left = std::chrono::ceil<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0)
            return;
        pollfd p{fd, POLLIN, 0};
        const int r = ::poll(&p, 1, static_cast<int>(left.count()));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return;
        for (;;) {
            const ssize_t n = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
            if (n < 0)
                break;
            WireHeader h;
            // Acks of an earlier message that timed out are simply dropped.
            if (decodeHeader(buf, static_cast<std::size_t>(n), h) && h.kind == kAck && h.seq == seq)
                std::erase(waitFor, h.gate);
        }
    }
}

void CoherenceBus::markLagging(const std::vector<std::uint64_t> &ids)
{
    const auto now = std::chrono::steady_clock::now();
    std::lock_guard lock(m_mutex);
    for (Peer &peer : m_peers) {
        if (std::find(ids.begin(), ids.end(), peer.id) == ids.end())
            continue;
        peer.backoff = peer.backoff.count() == 0
                           ? std::chrono::milliseconds(1000)
                           : std::min(peer.backoff * 2, std::chrono::milliseconds(60'000));
        peer.laggingUntil = now + peer.backoff;
        std::fprintf(stderr,
                     "leasehold gate: peer %s did not acknowledge; not waited for %lld ms\n",
                     peer.name.c_str(), static_cast<long long>(peer.backoff.count()));
    }
}

void CoherenceBus::forgiveLagging(const std::vector<std::uint64_t> &asked,
                                  const std::vector<std::uint64_t> &silent)
{
    std::lock_guard lock(m_mutex);
    for (Peer &peer : m_peers) {
        if (std::find(asked.begin(), asked.end(), peer.id) != asked.end() &&
            std::find(silent.begin(), silent.end(), peer.id) == silent.end())
            peer.backoff = std::chrono::milliseconds(0);
    }
}

void CoherenceBus::drain(const std::function<void(std::span<const BusItem>)> &apply)
{
    char buf[kMaxMessage];
    std::vector<BusItem> items;
    for (;;) {
        sockaddr_un from = {};
        socklen_t fromLength = sizeof from;
        const ssize_t n = ::recvfrom(m_socket, buf, sizeof buf, MSG_DONTWAIT,
                                     reinterpret_cast<sockaddr *>(&from), &fromLength);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return;
        }
        WireHeader h;
        items.clear();
        if (!decodeHeader(buf, static_cast<std::size_t>(n), h) || h.kind != kInvalidate ||
            !decodeItems(buf, static_cast<std::size_t>(n), h, items))
            continue;
        apply(items);
        char ack[sizeof(WireHeader)];
        const std::size_t size = encode(ack, kAck, m_id, h.seq, {});
        ::sendto(m_socket, ack, size, MSG_DONTWAIT | MSG_NOSIGNAL,
                 reinterpret_cast<sockaddr *>(&from), fromLength);
    }
}

} // namespace leasehold::fsgate::detail
