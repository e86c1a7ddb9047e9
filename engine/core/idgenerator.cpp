#include "idgenerator.h"

#include <random>

namespace leasehold {

namespace {

inline std::uint64_t rotl(std::uint64_t x, int b)
{
    return (x << b) | (x >> (64 - b));
}

inline void sipRound(std::uint64_t &v0, std::uint64_t &v1, std::uint64_t &v2, std::uint64_t &v3)
{
    v0 += v1;
    v1 = rotl(v1, 13);
    v1 ^= v0;
    v0 = rotl(v0, 32);
    v2 += v3;
    v3 = rotl(v3, 16);
    v3 ^= v2;
    v0 += v3;
    v3 = rotl(v3, 21);
    v3 ^= v0;
    v2 += v1;
    v1 = rotl(v1, 17);
    v1 ^= v2;
    v2 = rotl(v2, 32);
}

void writeHex(char *out, std::uint64_t value)
{
    static constexpr char kDigits[] = "0123456789abcdef";
    for (int i = 15; i >= 0; --i, value >>= 4)
        out[i] = kDigits[value & 0xF];
}

} // namespace

IdGenerator::IdGenerator()
{
    std::random_device device;
    for (std::uint64_t &word : m_key)
        word = (static_cast<std::uint64_t>(device()) << 32) ^ device();
}

std::uint64_t IdGenerator::sipHash24(const Key &key, std::uint64_t message)
{
    std::uint64_t v0 = 0x736f6d6570736575ULL ^ key[0];
    std::uint64_t v1 = 0x646f72616e646f6dULL ^ key[1];
    std::uint64_t v2 = 0x6c7967656e657261ULL ^ key[0];
    std::uint64_t v3 = 0x7465646279746573ULL ^ key[1];
    // One 8-byte block, then the final block carrying the length (8) in its top byte.
    v3 ^= message;
    sipRound(v0, v1, v2, v3);
    sipRound(v0, v1, v2, v3);
    v0 ^= message;
    const std::uint64_t last = 8ULL << 56;
    v3 ^= last;
    sipRound(v0, v1, v2, v3);
    sipRound(v0, v1, v2, v3);
    v0 ^= last;
    v2 ^= 0xff;
    for (int i = 0; i < 4; ++i)
        sipRound(v0, v1, v2, v3);
    return v0 ^ v1 ^ v2 ^ v3;
}

std::string IdGenerator::next(std::string_view prefix)
{
    const std::uint64_t n = ++m_counter;
    char hex[32];
    writeHex(hex, sipHash24(m_key, 2 * n));
    writeHex(hex + 16, sipHash24(m_key, 2 * n + 1));
    std::string id;
    id.reserve(prefix.size() + sizeof hex);
    id.append(prefix);
    id.append(hex, sizeof hex);
    return id;
}

} // namespace leasehold
