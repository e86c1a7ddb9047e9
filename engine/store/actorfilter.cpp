#include "actorfilter.h"

#include <algorithm>

namespace leasehold {

namespace {

std::uint64_t fnv1a(std::string_view text)
{
    std::uint64_t h = 14695981039346656037ull;
    for (const char c : text) {
        h ^= static_cast<unsigned char>(c);
        h *= 1099511628211ull;
    }
    return h;
}

// Probe `i` of a name whose hash is `hash`, among `bits` bits (double hashing: h1 + i·h2).
std::uint64_t probe(std::uint64_t hash, int i, std::uint64_t bits)
{
    const std::uint64_t h1 = hash & 0xffffffffu;
    const std::uint64_t h2 = (hash >> 32) | 1;
    return (h1 + std::uint64_t(i) * h2) % bits;
}

} // namespace

ActorFilter::ActorFilter(std::size_t agents)
    : m_bits(std::max<std::size_t>(8, (agents * 10 + 7) / 8), '\0')
{}

ActorFilter ActorFilter::fromBytes(std::string_view bytes, int probes)
{
    ActorFilter f;
    f.m_bits = std::string(bytes);
    f.m_probes = probes;
    return f;
}

void ActorFilter::add(std::string_view agent)
{
    const std::uint64_t hash = fnv1a(agent);
    const std::uint64_t bits = m_bits.size() * 8;
    for (int i = 0; i < m_probes; ++i) {
        const std::uint64_t at = probe(hash, i, bits);
        m_bits[at / 8] = char(static_cast<unsigned char>(m_bits[at / 8]) | (1u << (at % 8)));
    }
}

bool ActorFilter::mayHold(std::string_view agent) const
{
    if (m_bits.empty() || m_probes <= 0)
        return true;
    const std::uint64_t hash = fnv1a(agent);
    const std::uint64_t bits = m_bits.size() * 8;
    for (int i = 0; i < m_probes; ++i) {
        const std::uint64_t at = probe(hash, i, bits);
        if (!(static_cast<unsigned char>(m_bits[at / 8]) & (1u << (at % 8))))
            return false;
    }
    return true;
}

} // namespace leasehold
