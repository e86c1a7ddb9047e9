#pragma once

#include <cstdint>

namespace leasehold {

// Milliseconds since the Unix epoch. Every time the engine reads or stores is in this unit.
using TimeMs = std::int64_t;

// The engine's only way to learn the time. Production passes SystemClock; tests pass a
// ManualClock and move it by hand, so no test ever sleeps to let a lease expire.
//
// Thread-safety: nowMs() is called from the engine's thread only.
class Clock
{
public:
    virtual ~Clock() = default;
    virtual TimeMs nowMs() const = 0;
};

// Wall-clock time (std::chrono::system_clock), as clients see it in grantedAt/expiresAt.
class SystemClock final : public Clock
{
public:
    TimeMs nowMs() const override;
};

// A clock that only moves when told to.
class ManualClock final : public Clock
{
public:
    explicit ManualClock(TimeMs start = 1'700'000'000'000)
        : m_now(start)
    {}

    TimeMs nowMs() const override { return m_now; }
    // Requires: deltaMs >= 0 (time never runs backwards).
    void advance(TimeMs deltaMs) { m_now += deltaMs; }
    void set(TimeMs nowMs) { m_now = nowMs; }

private:
    TimeMs m_now;
};

} // namespace leasehold
