#include "clock.h"

#include <chrono>

namespace leasehold {

TimeMs SystemClock::nowMs() const
{
    using namespace std::chrono;
    return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

} // namespace leasehold
