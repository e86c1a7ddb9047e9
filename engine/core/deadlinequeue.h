#pragma once

#include "clock.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace leasehold {

// What a timed item is, so the engine knows what to do when its deadline passes. Items due at
// the same millisecond are handled in this order: pins end before the leases they hold, and
// waits time out after everything freed at that moment has been offered to the queue, and a
// release request falls overdue last (a lease that ends at its deadline answered it in time).
enum class TimerKind { PinBound, LeaseExpiry, WantLapse, WaitDeadline, RequestDeadline };

// Base of everything the engine keeps a deadline for. The queue writes heapSlot; nothing else
// may touch it.
struct Timed
{
    explicit Timed(TimerKind k)
        : kind(k)
    {}
    TimerKind kind;
    TimeMs deadline = 0;
    std::uint64_t order = 0; // breaks ties between items of one kind due at the same moment
    std::size_t heapSlot = kNotQueued;
    static constexpr std::size_t kNotQueued = static_cast<std::size_t>(-1);
};

// An intrusive binary min-heap of deadlines: one alarm (the earliest deadline) serves every
// lease, pin, want and parked waiter. Insert, update and remove are O(log n); nothing scans.
//
// Not thread-safe: owned by the engine thread. Items must outlive their membership.
class DeadlineQueue
{
public:
    DeadlineQueue() = default;
    DeadlineQueue(const DeadlineQueue &) = delete;
    DeadlineQueue &operator=(const DeadlineQueue &) = delete;

    // Inserts `item` at `deadline`, or moves it there when already queued.
    void schedule(Timed *item, TimeMs deadline);
    // Removes `item` if queued; a no-op otherwise.
    void cancel(Timed *item);

    bool empty() const { return m_heap.empty(); }
    std::size_t size() const { return m_heap.size(); }
    // Requires: !empty().
    Timed *top() const { return m_heap.front(); }
    TimeMs nextDeadline() const { return m_heap.front()->deadline; }

    // Verifies the heap property and every item's slot; returns false on a broken invariant.
    bool isConsistent() const;

private:
    void siftUp(std::size_t slot);
    void siftDown(std::size_t slot);
    void place(std::size_t slot, Timed *item);
    static bool earlier(const Timed *a, const Timed *b)
    {
        if (a->deadline != b->deadline)
            return a->deadline < b->deadline;
        return a->kind != b->kind ? a->kind < b->kind : a->order < b->order;
    }

    std::vector<Timed *> m_heap;
};

} // namespace leasehold
