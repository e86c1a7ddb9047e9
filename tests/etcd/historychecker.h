#pragma once

// A history checker in the spirit of Jepsen's: clients record every acknowledged grant with the
// real-time window it is known to cover, and the checker looks for what a lock service must
// never do, whatever failed meanwhile.

#include <QtGlobal>

#include <cstdint>
#include <string>
#include <vector>

struct GrantRecord
{
    std::string resource;
    std::string holder;
    std::uint64_t token = 0;
    qint64 sentMs = 0;  // the acquire left the client
    qint64 ackedMs = 0; // its 200 arrived
    // Until when the holder may rely on it: the release was sent, or the TTL counted from
    // `sentMs` ran out, whichever came first.
    qint64 untilMs = 0;
};

// What is wrong with `history`, one sentence each (empty: nothing):
//   - two acknowledged exclusive grants of one resource whose windows [ackedMs, untilMs]
//     overlap;
//   - a grant acknowledged before another was sent, with a token not below the other's
//     (fencing tokens only grow).
std::vector<std::string> checkHistory(const std::vector<GrantRecord> &history);
