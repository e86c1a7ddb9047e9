#pragma once

// A LeaseStore the test drives by hand: nothing is durable until the test commits it, and the
// store's health is whatever the test reports. Everything happens on the calling thread, so a
// test decides exactly when a change becomes durable or the disk falls ill.

#include "leasestore.h"

namespace leasehold::test {

class FakeStore : public LeaseStore
{
public:
    std::optional<StoredState> load(std::string *) override { return StoredState{}; }
    std::uint64_t submit(StoreOps &ops) override
    {
        submittedOps += ops.size();
        ops.clear();
        ++m_submitted;
        if (autoCommit)
            commitAll();
        return m_submitted;
    }
    void setDurableCallback(std::function<void(std::uint64_t)> callback) override
    {
        m_onDurable = std::move(callback);
    }
    void setHealthCallback(std::function<void(const StoreHealth &)> callback) override
    {
        m_onHealth = std::move(callback);
    }
    std::vector<LedgerEvent> ledger(std::uint64_t, std::size_t, const LedgerFilter &) override
    {
        return {};
    }
    void readLedger(std::uint64_t, std::size_t, const LedgerFilter &,
                    std::function<void(std::vector<LedgerEvent>)> done) override
    {
        done({});
    }
    StoreStats stats() const override
    {
        StoreStats s;
        s.submitted = m_submitted;
        s.durable = m_durable;
        s.commitTimes = commitTimes.counts();
        return s;
    }
    void close() override {}

    CommitTimes commitTimes; // what stats() reports; the test records into it

    // Everything submitted so far is durable now.
    void commitAll()
    {
        m_durable = m_submitted;
        if (m_onDurable)
            m_onDurable(m_durable);
    }
    void report(StoreHealth::Problem problem)
    {
        if (m_onHealth)
            m_onHealth({problem, "injected by the test"});
    }

    bool autoCommit = false;
    std::uint64_t submittedOps = 0;

private:
    std::uint64_t m_submitted = 0;
    std::uint64_t m_durable = 0;
    std::function<void(std::uint64_t)> m_onDurable;
    std::function<void(const StoreHealth &)> m_onHealth;
};

} // namespace leasehold::test
