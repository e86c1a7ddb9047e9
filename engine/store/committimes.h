#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>

namespace leasehold {

// How long a store's commits take (the transaction and its fsync, or etcd's round trip), as a
// histogram its writer thread fills and any thread reads: the durable path's share of an
// answer's time, apart from the time requests wait for the engine or the machine.
class CommitTimes
{
public:
    // Upper bounds in seconds, as GET /metrics names them; one more bucket holds what is slower.
    static constexpr std::array<double, 12> kBounds = {0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
                                                       0.025,   0.05,   0.1,   0.25,   1.0,   5.0};

    struct Counts
    {
        std::array<std::uint64_t, kBounds.size() + 1> buckets{}; // each its own, not cumulative
        std::uint64_t count = 0;
        double sumSeconds = 0;
    };

    void record(std::chrono::nanoseconds took)
    {
        const double seconds = std::chrono::duration<double>(took).count();
        std::size_t i = 0;
        while (i < kBounds.size() && seconds > kBounds[i])
            ++i;
        m_sumNs.fetch_add(std::uint64_t(took.count()), std::memory_order_relaxed);
        m_buckets[i].fetch_add(1, std::memory_order_relaxed);
    }

    // The count is the buckets' sum, so the +Inf bucket always equals it, however a read
    // interleaves with a record.
    Counts counts() const
    {
        Counts c;
        c.sumSeconds = double(m_sumNs.load(std::memory_order_relaxed)) / 1e9;
        for (std::size_t i = 0; i < c.buckets.size(); ++i) {
            c.buckets[i] = m_buckets[i].load(std::memory_order_relaxed);
            c.count += c.buckets[i];
        }
        return c;
    }

private:
    std::array<std::atomic<std::uint64_t>, kBounds.size() + 1> m_buckets{};
    std::atomic<std::uint64_t> m_sumNs{0};
};

} // namespace leasehold
