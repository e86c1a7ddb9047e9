#include "etcdcodec.h"
#include "etcdstore.h"
#include "threadname.h"

#include <QLoggingCategory>

#include <map>

Q_DECLARE_LOGGING_CATEGORY(lcEtcdStore)

namespace leasehold::etcd {

namespace {

// Events in one value of the ring: ~300 bytes each, so a run stays well inside a transaction.
constexpr std::size_t kRunEvents = 256;

// An operation's share of a request: key and value in base64 (4/3) and the JSON around them.
std::size_t requestBytes(const Op &op)
{
    return (op.key.size() + op.value.size() + op.rangeEnd.size()) * 4 / 3 + 64;
}

} // namespace

std::vector<std::vector<Op>> EtcdStore::transactions(const std::vector<StoreOp> &ops) const
{
    // Last words: a lease granted and released within the batch is written as nothing.
    std::map<std::string, const LeaseInfo *> leases; // nullptr: dropped
    std::map<std::string, const AgentState *> agents;
    std::map<std::string, const StoredKey *> keys;
    std::uint64_t tokenEnd = 0;
    std::vector<const LedgerEvent *> events;
    for (const StoreOp &op : ops) {
        if (const auto *put = std::get_if<PutLease>(&op))
            leases[put->lease.leaseId] = &put->lease;
        else if (const auto *drop = std::get_if<DropLease>(&op))
            leases[drop->leaseId] = nullptr;
        else if (const auto *agent = std::get_if<PutAgent>(&op))
            agents[agent->agent.actorDid] = &agent->agent;
        else if (const auto *event = std::get_if<AppendEvent>(&op))
            events.push_back(&event->event);
        else if (const auto *reserve = std::get_if<ReserveTokens>(&op))
            tokenEnd = std::max(tokenEnd, reserve->end);
        else if (const auto *minted = std::get_if<PutKey>(&op))
            keys[minted->key.digestHex] = &minted->key;
    }
    std::vector<Op> all;
    if (tokenEnd != 0) // first: no token of the block is answered before the mark is durable
        all.push_back(Op::put(key("state/", "token_end"), std::to_string(tokenEnd)));
    for (const auto &[id, lease] : leases)
        all.push_back(lease ? Op::put(key("state/lease/", id), encodeLease(*lease))
                            : Op::erase(key("state/lease/", id)));
    for (const auto &[did, agent] : agents)
        all.push_back(Op::put(key("state/agent/", did), encodeAgent(*agent)));
    for (const auto &[digest, stored] : keys)
        all.push_back(Op::put(key("state/key/", digest), encodeKey(*stored)));
    // The ring: runs of events, each one value under its last event's sequence number, so a
    // batch's ledger costs a transaction an operation per run (of at most kRunEvents).
    for (std::size_t from = 0; from < events.size(); from += kRunEvents) {
        const std::vector<const LedgerEvent *> run(
            events.begin() + std::ptrdiff_t(from),
            events.begin() + std::ptrdiff_t(std::min(events.size(), from + kRunEvents)));
        all.push_back(Op::put(key("ledger/", sequenceKey(run.back()->seq)), encodeEvents(run)));
    }
    if (!events.empty() && events.back()->seq > m_options.ringEvents) {
        // The ring keeps at least the newest ringEvents events: a run goes once its last
        // event is older than those.
        all.push_back(
            Op::erase(key("ledger/", ""),
                      key("ledger/", sequenceKey(events.back()->seq - m_options.ringEvents + 1))));
    }
    std::vector<std::vector<Op>> out;
    std::size_t bytes = 0;
    for (Op &op : all) {
        const std::size_t size = requestBytes(op);
        if (out.empty() || out.back().size() >= m_options.maxTxnOps ||
            (bytes + size > m_options.maxTxnBytes && !out.back().empty())) {
            out.emplace_back();
            bytes = 0;
        }
        bytes += size;
        out.back().push_back(std::move(op));
    }
    return out;
}

EtcdStore::Outcome EtcdStore::commit(Client &client, const Compare &fence,
                                     const std::vector<std::vector<Op>> &txns, std::string *problem)
{
    for (const std::vector<Op> &txn : txns) {
        const std::optional<TxnResult> done = client.txn({fence}, txn);
        if (!done) {
            *problem = client.lastError().message;
            return Outcome::Failed;
        }
        if (!done->succeeded) {
            *problem = "the election key " + fence.key + " (term " + std::to_string(fence.number) +
                       ") is gone";
            return Outcome::Deposed;
        }
    }
    return Outcome::Committed;
}

void EtcdStore::writerLoop()
{
    nameThisThread("lh-etcd-writer");
    Client client(m_options.etcd);
    std::vector<Chunk> batch;
    std::vector<StoreOp> ops;
    int backoffMs = m_options.retryMinMs;
    std::string deposedBecause;
    for (;;) {
        std::optional<Compare> fence;
        {
            std::unique_lock lock(m_mutex);
            if (batch.empty()) {
                m_wake.wait(lock, [this] { return m_stopping || !m_queue.empty(); });
                if (m_queue.empty() && m_stopping)
                    break;
                std::size_t taken = 0;
                while (!m_queue.empty() && (batch.empty() || taken < m_options.maxBatch)) {
                    m_queuedEvents -= m_queue.front().ops.events();
                    m_queuedOps -= m_queue.front().ops.size();
                    taken += m_queue.front().ops.size();
                    batch.push_back(std::move(m_queue.front()));
                    m_queue.pop_front();
                }
                ops.clear();
                for (const Chunk &chunk : batch)
                    chunk.ops.decode(ops);
            }
            fence = m_fence;
        }
        std::string problem = m_deposed ? deposedBecause : "this instance has not been elected";
        const auto started = std::chrono::steady_clock::now();
        const Outcome outcome = fence && !m_deposed
                                    ? commit(client, *fence, transactions(ops), &problem)
                                    : Outcome::Deposed;
        if (outcome == Outcome::Committed) {
            m_commitTimes.record(std::chrono::steady_clock::now() - started);
            reportHealth(StoreHealth{});
            backoffMs = m_options.retryMinMs;
            StoreOps local; // the instance's own copy of the ledger
            for (const StoreOp &op : ops) {
                if (const auto *event = std::get_if<AppendEvent>(&op))
                    local.appendEvent(event->event);
            }
            if (!local.empty())
                m_ledger->submit(local);
            const std::uint64_t ticket = batch.back().ticket;
            batch.clear();
            m_durable.store(ticket);
            m_batches.fetch_add(1);
            QMetaObject::invokeMethod(
                this,
                [this, ticket] {
                    if (m_onDurable)
                        m_onDurable(ticket);
                },
                Qt::QueuedConnection);
            continue;
        }
        // Never skip a batch: what it holds may be promised once durable. A deposed leader
        // writes nothing more (its fence can never hold again); etcd out of reach is retried.
        if (outcome == Outcome::Deposed && fence && !m_deposed) {
            m_deposed = true;
            deposedBecause = problem;
        }
        m_failed.fetch_add(1);
        reportHealth({outcome == Outcome::Failed ? StoreHealth::Problem::EtcdUnavailable
                                                 : StoreHealth::Problem::NotLeading,
                      problem});
        std::unique_lock lock(m_mutex);
        if (m_stopping && std::chrono::steady_clock::now() >= m_closeDeadline) {
            std::size_t left = ops.size();
            for (const Chunk &chunk : m_queue)
                left += chunk.ops.size();
            m_lost.fetch_add(left);
            qCCritical(lcEtcdStore) << "closing: gave up on" << left
                                    << "operations etcd did not take:" << problem.c_str();
            m_queue.clear();
            break;
        }
        m_wake.wait_for(lock, std::chrono::milliseconds(backoffMs));
        backoffMs = std::min(backoffMs * 2, m_options.retryMaxMs);
    }
}

} // namespace leasehold::etcd
