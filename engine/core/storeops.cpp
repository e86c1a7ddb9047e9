#include "storeops.h"

#include "ledgerfacts.h"
#include "overloaded.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <type_traits>
#include <utility>

namespace leasehold {

namespace {

constexpr std::size_t kHeader = sizeof(std::uint32_t) + sizeof(std::uint8_t);

// The encoded size of these strings: each is its u32 size and its bytes.
template<class... S> std::size_t texts(const S &...text)
{
    return ((sizeof(std::uint32_t) + std::string_view(text).size()) + ...);
}

// Reads what StoreOps wrote, in the same order.
class Reader
{
public:
    explicit Reader(const char *at)
        : m_at(at)
    {}

    template<class T> T get()
    {
        static_assert(std::is_trivially_copyable_v<T>);
        T value;
        std::memcpy(&value, m_at, sizeof value);
        m_at += sizeof value;
        return value;
    }
    std::string text()
    {
        const auto size = get<std::uint32_t>();
        std::string out(m_at, size);
        m_at += size;
        return out;
    }
    bool ok() const { return true; } // the buffer never leaves the process

private:
    const char *m_at;
};

} // namespace

StoreOps::StoreOps(std::initializer_list<StoreOp> ops)
{
    for (const StoreOp &op : ops)
        add(op);
}

// Copies fields into room StoreOps::record made.
class StoreOps::Writer
{
public:
    explicit Writer(char *at)
        : m_at(at)
    {}

    template<class T> Writer &put(T value)
    {
        static_assert(std::is_trivially_copyable_v<T>);
        std::memcpy(m_at, &value, sizeof value);
        m_at += sizeof value;
        return *this;
    }
    Writer &text(std::string_view text)
    {
        put(static_cast<std::uint32_t>(text.size()));
        std::memcpy(m_at, text.data(), text.size());
        m_at += text.size();
        return *this;
    }

private:
    char *m_at;
};

StoreOps::Writer StoreOps::record(Tag tag, std::size_t payload)
{
    const std::size_t need = m_used + kHeader + payload;
    if (need > m_capacity)
        reserve(std::max({need, 2 * m_capacity, std::size_t(4096)}));
    Writer header(m_bytes.get() + m_used);
    header.put(static_cast<std::uint32_t>(payload)).put(static_cast<std::uint8_t>(tag));
    char *at = m_bytes.get() + m_used + kHeader;
    m_used = need;
    ++m_count;
    return Writer(at);
}

void StoreOps::add(const StoreOp &op)
{
    std::visit(Overloaded{
                   [this](const PutLease &p) { putLease(p.lease); },
                   [this](const DropLease &d) { dropLease(d.leaseId); },
                   [this](const PutAgent &p) { putAgent(p.agent); },
                   [this](const AppendEvent &a) { appendEvent(a.event); },
                   [this](const ReserveTokens &r) { reserveTokens(r.end); },
                   [this](const PutKey &p) { putKey(p.key); },
               },
               op);
}

void StoreOps::putLease(const LeaseInfo &l)
{
    record(Tag::Lease, texts(l.leaseId, l.resource, l.holder) + 1 + 4 * 8)
        .text(l.leaseId)
        .text(l.resource)
        .text(l.holder)
        .put(static_cast<std::uint8_t>(l.mode))
        .put(l.token)
        .put(l.grantedAt)
        .put(l.expiresAt)
        .put(l.ttlMs);
}

void StoreOps::dropLease(std::string_view leaseId)
{
    record(Tag::Drop, texts(leaseId)).text(leaseId);
}

void StoreOps::putAgent(const AgentState &a)
{
    putAgent(a.actorDid, a.trust, a.releases, a.expiries, a.suspended);
}

void StoreOps::putAgent(std::string_view did, double trust, std::uint64_t releases,
                        std::uint64_t expiries, bool suspended)
{
    record(Tag::Agent, texts(did) + 3 * 8 + 1)
        .text(did)
        .put(trust)
        .put(releases)
        .put(expiries)
        .put(static_cast<std::uint8_t>(suspended));
}

void StoreOps::appendEvent(const LedgerEvent &e)
{
    Writer w = record(Tag::Event, texts(e.actorDid, e.resource, e.leaseId, e.reason) + 4 * 8 + 1 +
                                      encodedFactsSize(e.facts));
    w.put(e.seq)
        .put(e.at)
        .put(static_cast<std::uint8_t>(e.kind))
        .text(e.actorDid)
        .text(e.resource)
        .text(e.leaseId)
        .put(e.token)
        .put(e.ttlMs)
        .text(e.reason);
    writeFacts(w, e.facts);
    ++m_events;
}

void StoreOps::reserveTokens(std::uint64_t end)
{
    record(Tag::Reserve, 8).put(end);
}

void StoreOps::putKey(const StoredKey &k)
{
    record(Tag::Key, texts(k.digestHex, k.did, k.role) + 8)
        .text(k.digestHex)
        .text(k.did)
        .text(k.role)
        .put(k.createdAt);
}

void StoreOps::reserve(std::size_t bytes)
{
    if (bytes <= m_capacity)
        return;
    std::unique_ptr<char[]> grown(new char[bytes]); // default-initialized: not zero-filled
    if (m_used > 0)
        std::memcpy(grown.get(), m_bytes.get(), m_used);
    m_bytes = std::move(grown);
    m_capacity = bytes;
}

StoreOps &StoreOps::operator=(StoreOps &&other) noexcept
{
    if (this != &other) {
        m_bytes = std::move(other.m_bytes);
        m_capacity = std::exchange(other.m_capacity, 0);
        m_used = std::exchange(other.m_used, 0);
        m_count = std::exchange(other.m_count, 0);
        m_events = std::exchange(other.m_events, 0);
    }
    return *this;
}

void StoreOps::clear()
{
    m_used = 0;
    m_count = 0;
    m_events = 0;
}

void StoreOps::decode(std::vector<StoreOp> &out) const
{
    out.reserve(out.size() + m_count);
    std::size_t at = 0;
    while (at < m_used) {
        Reader r(m_bytes.get() + at);
        const auto payload = r.get<std::uint32_t>();
        switch (static_cast<Tag>(r.get<std::uint8_t>())) {
        case Tag::Lease: {
            LeaseInfo l;
            l.leaseId = r.text();
            l.resource = r.text();
            l.holder = r.text();
            l.mode = static_cast<Mode>(r.get<std::uint8_t>());
            l.token = r.get<std::uint64_t>();
            l.grantedAt = r.get<TimeMs>();
            l.expiresAt = r.get<TimeMs>();
            l.ttlMs = r.get<std::int64_t>();
            out.emplace_back(PutLease{std::move(l)});
            break;
        }
        case Tag::Drop:
            out.emplace_back(DropLease{r.text()});
            break;
        case Tag::Agent: {
            AgentState a;
            a.actorDid = r.text();
            a.trust = r.get<double>();
            a.releases = r.get<std::uint64_t>();
            a.expiries = r.get<std::uint64_t>();
            a.suspended = r.get<std::uint8_t>() != 0;
            out.emplace_back(PutAgent{std::move(a)});
            break;
        }
        case Tag::Event: {
            LedgerEvent e;
            e.seq = r.get<std::uint64_t>();
            e.at = r.get<TimeMs>();
            e.kind = static_cast<EventKind>(r.get<std::uint8_t>());
            e.actorDid = r.text();
            e.resource = r.text();
            e.leaseId = r.text();
            e.token = r.get<std::uint64_t>();
            e.ttlMs = r.get<std::int64_t>();
            e.reason = r.text();
            readFacts(r, e.facts);
            out.emplace_back(AppendEvent{std::move(e)});
            break;
        }
        case Tag::Reserve:
            out.emplace_back(ReserveTokens{r.get<std::uint64_t>()});
            break;
        case Tag::Key: {
            StoredKey k;
            k.digestHex = r.text();
            k.did = r.text();
            k.role = r.text();
            k.createdAt = r.get<TimeMs>();
            out.emplace_back(PutKey{std::move(k)});
            break;
        }
        }
        at += kHeader + payload;
    }
    assert(at == m_used);
}

void StoreOps::keepEvents(std::size_t keep)
{
    if (m_events <= keep)
        return;
    std::size_t used = 0;
    std::size_t count = 0;
    std::size_t events = 0;
    for (std::size_t at = 0; at < m_used;) {
        Reader r(m_bytes.get() + at);
        const std::size_t size = kHeader + r.get<std::uint32_t>();
        const bool event = static_cast<Tag>(r.get<std::uint8_t>()) == Tag::Event;
        if (!event || events < keep) {
            // Moves the operation down over those dropped before it.
            std::memmove(m_bytes.get() + used, m_bytes.get() + at, size);
            used += size;
            ++count;
            events += event ? 1 : 0;
        }
        at += size;
    }
    m_used = used;
    m_count = count;
    m_events = events;
}

} // namespace leasehold
