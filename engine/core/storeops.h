#pragma once

#include "leasetypes.h"
#include "ledgerevent.h"
#include "snapshot.h"

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace leasehold {

// One change for the store to make durable.
struct PutLease
{
    LeaseInfo lease;
};
struct DropLease
{
    std::string leaseId;
};
struct PutAgent
{
    AgentState agent;
};
struct AppendEvent
{
    LedgerEvent event;
};
struct ReserveTokens
{
    std::uint64_t end = 0; // every token below `end` may have been issued
};
// A bearer key minted while running. Only its SHA-256 digest is kept, never the key.
struct StoredKey
{
    std::string digestHex;
    std::string did;
    std::string role; // "agent" or "admin"
    TimeMs createdAt = 0;
};
struct PutKey
{
    StoredKey key;
};
using StoreOp = std::variant<PutLease, DropLease, PutAgent, AppendEvent, ReserveTokens, PutKey>;

// A run of store operations, encoded into one byte buffer as they are added.
//
// The engine journals every change here as it makes it, so writing one down must cost next to
// nothing: an operation is a few copies into storage that is already there, never an allocation
// of its own, and the buffer travels to the writer thread whole (moved, one block). The writer
// decodes it into StoreOp values on its own thread. The host reserve()s each fresh buffer from
// the size of recent ones, so filling it does not regrow it (growing copies all it holds).
//
// Layout per operation: payload size (u32), tag (u8), payload. Integers and doubles are copied
// in host byte order (the buffer never leaves the process); strings are a u32 size and bytes.
// An operation's size is known before it is written, so writing it is a run of small copies
// into room made once.
class StoreOps
{
public:
    StoreOps() = default;
    StoreOps(std::initializer_list<StoreOp> ops);
    StoreOps(StoreOps &&other) noexcept { *this = std::move(other); }
    // Takes `other`'s operations and storage; `other` is left empty, with no storage.
    StoreOps &operator=(StoreOps &&other) noexcept;

    void add(const StoreOp &op);
    void putLease(const LeaseInfo &lease);
    void dropLease(std::string_view leaseId);
    void putAgent(const AgentState &agent);
    void putAgent(std::string_view did, double trust, std::uint64_t releases,
                  std::uint64_t expiries, bool suspended);
    void appendEvent(const LedgerEvent &event);
    void reserveTokens(std::uint64_t end);
    void putKey(const StoredKey &key);

    std::size_t size() const { return m_count; }    // operations
    std::size_t events() const { return m_events; } // of which ledger events
    bool empty() const { return m_count == 0; }
    std::size_t capacity() const { return m_capacity; }
    std::size_t bytes() const { return m_used; }
    // Makes room for `bytes` in all, so that filling that much allocates once.
    void reserve(std::size_t bytes);
    // Forgets the operations and keeps the storage.
    void clear();

    // Appends the operations, in order, to `out`.
    void decode(std::vector<StoreOp> &out) const;
    // Keeps every state change and only the first `keep` ledger events.
    void keepEvents(std::size_t keep);

private:
    enum class Tag : std::uint8_t { Lease, Drop, Agent, Event, Reserve, Key };

    class Writer;
    // Room for one operation with `payload` bytes after its header; the header is written.
    Writer record(Tag tag, std::size_t payload);

    // Storage, never zero-filled: the first m_used of its m_capacity bytes hold operations.
    std::unique_ptr<char[]> m_bytes;
    std::size_t m_capacity = 0;
    std::size_t m_used = 0;
    std::size_t m_count = 0;
    std::size_t m_events = 0;
};

} // namespace leasehold
