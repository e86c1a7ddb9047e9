#include "deadlinequeue.h"

namespace leasehold {

void DeadlineQueue::schedule(Timed *item, TimeMs deadline)
{
    if (item->heapSlot == Timed::kNotQueued) {
        item->deadline = deadline;
        m_heap.push_back(item);
        item->heapSlot = m_heap.size() - 1;
        siftUp(item->heapSlot);
        return;
    }
    const TimeMs old = item->deadline;
    item->deadline = deadline;
    if (deadline < old)
        siftUp(item->heapSlot);
    else
        siftDown(item->heapSlot);
}

void DeadlineQueue::cancel(Timed *item)
{
    const std::size_t slot = item->heapSlot;
    if (slot == Timed::kNotQueued)
        return;
    item->heapSlot = Timed::kNotQueued;
    Timed *last = m_heap.back();
    m_heap.pop_back();
    if (slot == m_heap.size())
        return;
    place(slot, last);
    siftUp(slot);
    siftDown(last->heapSlot);
}

void DeadlineQueue::place(std::size_t slot, Timed *item)
{
    m_heap[slot] = item;
    item->heapSlot = slot;
}

void DeadlineQueue::siftUp(std::size_t slot)
{
    Timed *item = m_heap[slot];
    while (slot > 0) {
        const std::size_t parent = (slot - 1) / 2;
        if (!earlier(item, m_heap[parent]))
            break;
        place(slot, m_heap[parent]);
        slot = parent;
    }
    place(slot, item);
}

void DeadlineQueue::siftDown(std::size_t slot)
{
    Timed *item = m_heap[slot];
    const std::size_t n = m_heap.size();
    for (;;) {
        std::size_t child = 2 * slot + 1;
        if (child >= n)
            break;
        if (child + 1 < n && earlier(m_heap[child + 1], m_heap[child]))
            ++child;
        if (!earlier(m_heap[child], item))
            break;
        place(slot, m_heap[child]);
        slot = child;
    }
    place(slot, item);
}

bool DeadlineQueue::isConsistent() const
{
    for (std::size_t i = 0; i < m_heap.size(); ++i) {
        if (m_heap[i]->heapSlot != i)
            return false;
        if (i > 0 && earlier(m_heap[i], m_heap[(i - 1) / 2]))
            return false;
    }
    return true;
}

} // namespace leasehold
