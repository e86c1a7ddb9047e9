// EtcdStore standing by: the local ledger kept up with the ring in etcd (see etcdstore.h).

#include "etcdcodec.h"
#include "etcdstore.h"
#include "threadname.h"

#include <QLoggingCategory>

#include <chrono>

Q_DECLARE_LOGGING_CATEGORY(lcEtcdStore)

namespace leasehold::etcd {

namespace {

constexpr std::int64_t kPage = 16; // runs of the ring read per call (each up to 256 events)

std::int64_t steadyMs()
{
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

} // namespace

std::int64_t EtcdStore::followAgeMs() const
{
    const std::int64_t at = m_caughtUpAt.load();
    return at < 0 ? -1 : steadyMs() - at;
}

bool EtcdStore::openLocal(std::string *error)
{
    if (m_localOpen)
        return true;
    const std::optional<StoredState> local = m_ledger->load(error);
    if (!local) {
        *error = "the local ledger: " + *error;
        return false;
    }
    m_followedSeq.store(local->lastSeq);
    m_localOpen = true;
    return true;
}

bool EtcdStore::follow(std::string *error, int everyMs)
{
    if (!openLocal(error))
        return false;
    std::lock_guard lock(m_mutex);
    if (!m_follower.joinable() && !m_open) {
        m_stopFollowing = false;
        m_follower = std::thread([this, everyMs] { followLoop(everyMs); });
    }
    return true;
}

void EtcdStore::stopFollowing()
{
    {
        std::lock_guard lock(m_mutex);
        m_stopFollowing = true;
    }
    m_wake.notify_all();
    if (m_follower.joinable())
        m_follower.join();
}

void EtcdStore::followLoop(int everyMs)
{
    nameThisThread("lh-etcd-follow");
    Client client(m_options.etcd);
    std::string lastProblem;
    std::unique_lock lock(m_mutex);
    while (!m_stopFollowing) {
        lock.unlock();
        std::string problem;
        copyRing(client, &problem);
        if (problem != lastProblem && !problem.empty())
            qCWarning(lcEtcdStore) << "standing by, cannot follow the ledger:" << problem.c_str();
        lastProblem = problem;
        lock.lock();
        m_wake.wait_for(lock, std::chrono::milliseconds(everyMs),
                        [this] { return m_stopFollowing; });
    }
}

bool EtcdStore::copyRing(Client &client, std::string *error)
{
    const std::string ring = m_options.prefix + "ledger/";
    std::string from = ring + sequenceKey(m_followedSeq.load() + 1);
    for (;;) {
        const std::optional<std::vector<KeyValue>> events =
            client.range(from, Client::prefixEnd(ring), nullptr, kPage);
        if (!events) {
            *error = "cannot read the ledger ring from etcd: " + client.lastError().message;
            return false;
        }
        StoreOps page;
        std::uint64_t seq = m_followedSeq.load();
        for (const KeyValue &kv : *events) {
            for (const LedgerEvent &event : decodeEvents(kv.value)) {
                if (event.seq <= seq)
                    continue; // a run the local ledger holds the start of
                if (seq != 0 && event.seq != seq + 1)
                    qCWarning(lcEtcdStore) << "the local ledger misses events" << seq + 1 << "to"
                                           << event.seq - 1 << "(they left the ring unseen)";
                seq = event.seq;
                page.appendEvent(event);
            }
        }
        if (!page.empty())
            m_ledger->submit(page);
        m_followedSeq.store(seq);
        if (std::int64_t(events->size()) < kPage) {
            m_caughtUpAt.store(steadyMs());
            return true;
        }
        from = events->back().key + '\0'; // on past this page, read or not
    }
}

} // namespace leasehold::etcd
