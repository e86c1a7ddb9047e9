#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace leasehold {

// The one rule for an identity, applied wherever one enters: the keys file, minted keys,
// `actorDid`, `X-Agent-Id`. A DID is `did:<method>:<name>`: the method lower-case letters and
// digits, the name printable ASCII without whitespace, `=` or `,` and not ending in `:`; at most
// kMaxDidBytes in all. So a DID can be shown, logged and written in any file format as it is.
constexpr std::size_t kMaxDidBytes = 256;

// Why `did` breaks the rule ("has a space", ...), or empty when it keeps it. The sentence
// follows the field's name: "actorDid " + didProblem(...).
std::string didProblem(std::string_view did);

inline bool isValidDid(std::string_view did)
{
    return didProblem(did).empty();
}

} // namespace leasehold
