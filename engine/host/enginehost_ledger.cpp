// EngineHost: ledger reads — the ring of recent events on the engine thread, the store below it
// for anything older, and a page that starts in the store and ends in the ring.

#include "enginehost.h"

#include <algorithm>

namespace leasehold {

std::vector<LedgerEvent> EngineHost::ledger(std::uint64_t since, std::size_t limit,
                                            const LedgerFilter &filter) const
{
    std::vector<LedgerEvent> out;
    // Older than the ring: the store has it; the ring continues where the store's page ends.
    if (m_store && (m_ledger.empty() || since + 1 < m_ledger.front().seq)) {
        out = m_store->ledger(since, limit, filter);
        if (out.size() >= limit)
            return out;
        if (!out.empty())
            since = out.back().seq;
    }
    continueFromRing(out, since, limit, filter);
    return out;
}

void EngineHost::continueFromRing(std::vector<LedgerEvent> &page, std::uint64_t since,
                                  std::size_t limit, const LedgerFilter &filter) const
{
    const std::uint64_t after = page.empty() ? since : page.back().seq;
    auto it = std::upper_bound(m_ledger.begin(), m_ledger.end(), after,
                               [](std::uint64_t s, const LedgerEvent &e) { return s < e.seq; });
    for (; it != m_ledger.end() && page.size() < limit; ++it) {
        if (filter.matches(*it))
            page.push_back(*it);
    }
}

bool EngineHost::forEachRecent(std::uint64_t since,
                               FunctionRef<void(const LedgerEvent &)> visit) const
{
    const std::uint64_t last = m_engine->lastSeq();
    if (since > last)
        return false;
    if (since == last)
        return true;
    if (m_ledger.empty() || m_ledger.front().seq > since + 1 || m_ledger.back().seq != last)
        return false;
    auto it = std::upper_bound(m_ledger.begin(), m_ledger.end(), since,
                               [](std::uint64_t s, const LedgerEvent &e) { return s < e.seq; });
    for (; it != m_ledger.end(); ++it)
        visit(*it);
    return true;
}

void EngineHost::readLedger(std::uint64_t since, std::size_t limit, const LedgerFilter &filter,
                            std::function<void(std::vector<LedgerEvent>)> done)
{
    if (!m_store || (!m_ledger.empty() && since + 1 >= m_ledger.front().seq))
        return done(ledger(since, limit, filter)); // all in the ring
    m_store->readLedger(since, limit, filter,
                        [self = m_self.weak(), since, limit, filter,
                         done = std::move(done)](std::vector<LedgerEvent> page) mutable {
                            // On the store's reader thread: the rest is finished on the engine
                            // thread, posted with the host as its context (dropped if the host goes
                            // before it runs).
                            self.with([&](EngineHost &host) {
                                QMetaObject::invokeMethod(
                                    &host,
                                    [&host, since, limit, filter, done = std::move(done),
                                     page = std::move(page)]() mutable {
                                        host.continueFromRing(page, since, limit, filter);
                                        done(std::move(page));
                                    },
                                    Qt::QueuedConnection);
                            });
                        });
}

} // namespace leasehold
