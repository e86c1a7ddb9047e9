#include "etcdstore.h"

#include "etcdcodec.h"

#include <QLoggingCategory>

Q_DECLARE_LOGGING_CATEGORY(lcEtcdStore)

namespace leasehold::etcd {

EtcdStore::EtcdStore(Options options, QObject *parent)
    : QObject(parent)
    , m_options(std::move(options))
    , m_ledger(std::make_unique<SqliteStore>(m_options.localLedger))
{}

EtcdStore::~EtcdStore()
{
    close();
}

void EtcdStore::setFence(const Compare &fence)
{
    std::lock_guard lock(m_mutex);
    m_fence = fence;
}

std::optional<StoredState> EtcdStore::load(std::string *error)
{
    stopFollowing();
    if (!openLocal(error))
        return std::nullopt;
    Client client(m_options.etcd);
    const std::string state = m_options.prefix + "state/";
    std::int64_t revision = 0;
    const std::optional<std::vector<KeyValue>> kvs =
        client.range(state, Client::prefixEnd(state), &revision);
    if (!kvs) {
        *error = "cannot read the state from etcd: " + client.lastError().message;
        return std::nullopt;
    }
    StoredState out;
    std::size_t damaged = 0;
    for (const KeyValue &kv : *kvs) {
        const std::string_view name = std::string_view(kv.key).substr(state.size());
        bool ok = true;
        if (name.starts_with("lease/")) {
            std::optional<LeaseInfo> lease = decodeLease(kv.value);
            ok = lease && lease->leaseId == name.substr(6);
            if (ok)
                out.leases.push_back(std::move(*lease));
        } else if (name.starts_with("agent/")) {
            std::optional<AgentState> agent = decodeAgent(kv.value);
            ok = agent && agent->actorDid == name.substr(6);
            if (ok)
                out.agents.push_back(std::move(*agent));
        } else if (name.starts_with("key/")) {
            std::optional<StoredKey> stored = decodeKey(kv.value);
            ok = stored && stored->digestHex == name.substr(4);
            if (ok)
                out.keys.push_back(std::move(*stored));
        } else if (name == "token_end") {
            bool parsed = false;
            out.tokenEnd = QByteArray::fromStdString(kv.value).toULongLong(&parsed);
            if (!parsed || out.tokenEnd == 0 || out.tokenEnd >= (std::uint64_t(1) << 62)) {
                *error = "the token high-water mark in etcd (" + kv.value + ") is impossible";
                return std::nullopt;
            }
        }
        damaged += ok ? 0 : 1;
    }
    if (damaged > 0)
        qCWarning(lcEtcdStore) << damaged << "values under" << state.c_str()
                               << "could not be read and were skipped";
    // Tokens keep growing past every lease that was stored, whatever the mark says.
    for (const LeaseInfo &lease : out.leases)
        out.tokenEnd = std::max(out.tokenEnd, lease.token + 1);

    // The ring: whatever of it the local ledger has not seen is copied in first.
    if (!copyRing(client, error))
        return std::nullopt;
    out.lastSeq = m_followedSeq.load();

    std::lock_guard lock(m_mutex);
    if (!m_open) {
        m_open = true;
        m_writer = std::thread([this] { writerLoop(); });
    }
    return out;
}

std::uint64_t EtcdStore::submit(StoreOps &ops)
{
    std::lock_guard lock(m_mutex);
    if (m_queuedEvents + ops.events() > m_options.maxQueuedEvents) {
        const std::size_t keep =
            m_options.maxQueuedEvents - std::min(m_options.maxQueuedEvents, m_queuedEvents);
        m_dropped.fetch_add(ops.events() - std::min(keep, ops.events()));
        ops.keepEvents(keep);
    }
    const std::uint64_t ticket = ++m_submitted;
    m_queuedEvents += ops.events();
    m_queuedOps += ops.size();
    m_queue.push_back({ticket, std::move(ops)});
    m_wake.notify_one();
    return ticket;
}

void EtcdStore::setDurableCallback(std::function<void(std::uint64_t)> callback)
{
    m_onDurable = std::move(callback);
}

std::vector<LedgerEvent> EtcdStore::ledger(std::uint64_t since, std::size_t limit,
                                           const LedgerFilter &filter)
{
    return m_ledger->ledger(since, limit, filter);
}

void EtcdStore::readLedger(std::uint64_t since, std::size_t limit, const LedgerFilter &filter,
                           std::function<void(std::vector<LedgerEvent>)> done)
{
    m_ledger->readLedger(since, limit, filter, std::move(done));
}

StoreStats EtcdStore::stats() const
{
    StoreStats s;
    std::lock_guard lock(m_mutex);
    s.submitted = m_submitted;
    s.durable = m_durable.load();
    s.batches = m_batches.load();
    s.queued = m_queuedOps;
    s.droppedEvents = m_dropped.load();
    s.failedBatches = m_failed.load();
    s.lostOps = m_lost.load();
    s.commitTimes = m_commitTimes.counts();
    return s;
}

void EtcdStore::close()
{
    stopFollowing();
    {
        std::unique_lock lock(m_mutex);
        if (!m_open) {
            lock.unlock();
            m_ledger->close(); // a standby's, when it followed
            return;
        }
        m_open = false;
        m_stopping = true;
        m_closeDeadline =
            std::chrono::steady_clock::now() + std::chrono::milliseconds(m_options.closeTimeoutMs);
    }
    m_wake.notify_all();
    if (m_writer.joinable())
        m_writer.join();
    m_ledger->close();
}

} // namespace leasehold::etcd
