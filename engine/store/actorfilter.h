#pragma once

// A sealed ledger partition's agents as a Bloom filter: a query for one agent visits only the
// partitions whose filter may hold it. One row per partition, written once when it is sealed
// and deleted with it, so keeping the summary costs the same however many agents a fleet has
// (a row per agent and partition, indexed by agent, made every seal thousands of random
// writes into an index of millions of rows: 20 s from a cold cache with 5 000 agents).
//
// Ten bits and seven probes per agent: about one partition in a hundred is visited for an agent
// it does not hold, which costs one index lookup there. The hash is FNV-1a, fixed here, since
// the filters outlive the program that wrote them.

#include <cstdint>
#include <string>
#include <string_view>

namespace leasehold {

class ActorFilter
{
public:
    static constexpr int kProbes = 7;

    // A filter sized for `agents` (at least 64 bits).
    explicit ActorFilter(std::size_t agents);
    // A filter as stored; an empty or damaged one holds everything (a query visits it).
    static ActorFilter fromBytes(std::string_view bytes, int probes);

    void add(std::string_view agent);
    bool mayHold(std::string_view agent) const;
    const std::string &bytes() const { return m_bits; }

private:
    ActorFilter() = default;
    std::string m_bits;
    int m_probes = kProbes;
};

} // namespace leasehold
