#pragma once

// What resourcetrie.cpp and resourcetrie_checks.cpp share: the index of a claim's class in a
// node's [shared, exclusive] totals, and a segment's extension as TrieNode::byExtension keys it.

#include <optional>
#include <string_view>

namespace leasehold {

// What follows the last '.' of `segment` ("" for "name."), or nothing when it has none.
inline std::optional<std::string_view> extensionOf(std::string_view segment)
{
    const std::size_t dot = segment.rfind('.');
    if (dot == std::string_view::npos)
        return std::nullopt;
    return segment.substr(dot + 1);
}

inline int classOf(bool exclusive)
{
    return exclusive ? 1 : 0;
}

} // namespace leasehold
