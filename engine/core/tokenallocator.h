#pragma once

#include <cstdint>
#include <functional>

namespace leasehold {

// Hands out fencing tokens: strictly increasing, never reused, also across restarts.
//
// Durability is by reservation: before a token beyond the reserved range is issued, the
// allocator asks `reserve(end)` to make "every token below end may be in use" durable, one block
// at a time. After a crash the next process starts at the persisted end, skipping at most one
// block of numbers and never repeating one. Without a reserve callback tokens live in memory.
//
// Not thread-safe: owned by the engine thread.
class TokenAllocator
{
public:
    using Reserve = std::function<void(std::uint64_t end)>;

    // Requires: first >= 1, blockSize >= 1.
    explicit TokenAllocator(std::uint64_t first = 1, std::uint64_t blockSize = 4096,
                            Reserve reserve = {});

    std::uint64_t next();
    // The token next() would return.
    std::uint64_t peek() const { return m_next; }
    // Everything below this may have been issued (the value a store persists).
    std::uint64_t reservedEnd() const { return m_reservedEnd; }

private:
    std::uint64_t m_next;
    std::uint64_t m_reservedEnd;
    std::uint64_t m_blockSize;
    Reserve m_reserve;
};

} // namespace leasehold
