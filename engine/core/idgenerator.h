#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace leasehold {

// Makes identifiers a client cannot guess: SipHash-2-4 under a 128-bit secret key, applied to a
// counter. Knowing every id handed out so far tells nothing about the next one; two ids never
// repeat while the counter does not wrap. The key comes from std::random_device unless a test
// supplies one (then ids are reproducible).
//
// Not thread-safe: owned by the engine thread.
class IdGenerator
{
public:
    using Key = std::array<std::uint64_t, 2>;

    IdGenerator();
    explicit IdGenerator(Key key)
        : m_key(key)
    {}

    // "<prefix>" followed by 32 lower-case hex digits (128 bits).
    std::string next(std::string_view prefix);

    static std::uint64_t sipHash24(const Key &key, std::uint64_t message);

private:
    Key m_key;
    std::uint64_t m_counter = 0;
};

} // namespace leasehold
