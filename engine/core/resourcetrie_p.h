#pragma once

// What resourcetrie.cpp and resourcetrie_checks.cpp share: the index of a claim's class in a
// node's [shared, exclusive] totals.

namespace leasehold {

inline int classOf(bool exclusive)
{
    return exclusive ? 1 : 0;
}

} // namespace leasehold
