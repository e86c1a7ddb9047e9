// GateCore: coherence between mounts of one workspace — what this mount publishes on the bus,
// what it applies from the others, and the invalidator thread that tells the kernel.

#include "gatecore.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>

namespace leasehold::fsgate::detail {

void GateCore::publish(const Invalidation &what)
{
    m_watch.own(what.items());
    if (m_bus)
        m_bus->publish(what.items());
}

// Attributes are dropped here, synchronously, before the acknowledgement: that never waits
// (the kernel only bumps a version). Names take their folder's lock in the kernel, which an
// operation of ours may hold while it waits for the very gate we are answering: two gates
// changing one folder at once would each wait for the other. So names go to the invalidator,
// and the acknowledgement waits for them at most kNameWait, and not at all while the
// invalidator is already stuck on a lock. Normally they are done in microseconds and the ack is
// strict; in that one case it is not, and the name is dropped the moment the folder's own
// operation ends.
void GateCore::applyRemote(std::span<const BusItem> items)
{
    constexpr auto kNameWait = std::chrono::milliseconds(5);
    if (!m_session)
        return;
    m_watch.own(items); // invalidated here: the watch need not do it again
    std::vector<Job> names, pages;
    for (const BusItem &item : items) {
        if (item.kind == BusItem::InodeItem) {
            const fuse_ino_t ino = m_inodes.noteRemoteChange(item.key);
            if (ino == 0)
                continue;
            fuse_lowlevel_notify_inval_inode(m_session, ino, -1, 0);
            pages.push_back(Job{ino, {}});
        } else {
            namesMoved();
            if (const fuse_ino_t parent = m_inodes.find(item.key))
                names.push_back(Job{parent, std::string(item.name)});
        }
    }
    if (names.empty() && pages.empty())
        return;
    std::unique_lock lock(m_queueMutex);
    if (m_queue.size() > 65536)
        return; // a stuck invalidator: the timeouts still bound staleness
    for (Job &job : names)
        m_queue.push_back(std::move(job));
    const std::uint64_t namesDone = m_queued += names.size();
    for (Job &job : pages)
        m_queue.push_back(std::move(job));
    m_queued += pages.size();
    m_queueWake.notify_one();
    const auto now = std::chrono::steady_clock::now();
    const bool stuck = m_busySince != decltype(m_busySince){} && now - m_busySince > kNameWait;
    if (!names.empty() && !stuck)
        m_doneWake.wait_until(lock, now + kNameWait,
                              [&] { return m_finished >= namesDone || m_stopInvalidator; });
}

void GateCore::dropPages(fuse_ino_t ino)
{
    std::lock_guard lock(m_queueMutex);
    m_queue.push_back(Job{ino, {}});
    ++m_queued;
    m_queueWake.notify_one();
}

void GateCore::startInvalidator()
{
    m_stopInvalidator = false;
    m_invalidator = std::thread([this] { invalidatorLoop(); });
}

void GateCore::stopInvalidator()
{
    if (!m_invalidator.joinable())
        return;
    {
        std::lock_guard lock(m_queueMutex);
        m_stopInvalidator = true;
    }
    m_queueWake.notify_one();
    m_doneWake.notify_all();
    m_invalidator.join();
}

void GateCore::invalidatorLoop()
{
    std::vector<Job> batch;
    for (;;) {
        {
            std::unique_lock lock(m_queueMutex);
            m_busySince = {};
            m_queueWake.wait(lock, [this] { return m_stopInvalidator || !m_queue.empty(); });
            if (m_stopInvalidator)
                return;
            batch.swap(m_queue);
            m_busySince = std::chrono::steady_clock::now();
        }
        // A number forgotten meanwhile is unknown to the kernel (ENOENT) or, reused, loses
        // some cache it did not need to: harmless either way.
        for (const Job &job : batch) {
            if (job.name.empty())
                fuse_lowlevel_notify_inval_inode(m_session, job.ino, 0, 0);
            else // libfuse sends the terminating NUL too: name is a std::string
                fuse_lowlevel_notify_inval_entry(m_session, job.ino, job.name.c_str(),
                                                 job.name.size());
            std::lock_guard lock(m_queueMutex);
            ++m_finished;
            m_doneWake.notify_all();
        }
        batch.clear();
    }
}

} // namespace leasehold::fsgate::detail
