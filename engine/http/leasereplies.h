#pragma once

// The answers to the two calls agents make most, a grant and a release, written straight into
// bytes: the same bytes as building them with nlohmann::json and dumping that (keys in order,
// compact), without the tree of values. Under load that tree cost more of the engine thread
// than the engine's decisions did.

#include "leasetypes.h"

#include <optional>
#include <string>

namespace leasehold {

// {"lease":…,"leases":[…],"ok":true[,"waitedMs":n]}; nullopt when a text in it is not plain
// ASCII (the caller builds the answer as a JSON tree then, which checks its UTF-8).
std::optional<std::string> grantJson(const Grant &grant);

// {"ok":true,"released":[…],"trust":x}; nullopt as above.
std::optional<std::string> releasedJson(const Released &released);

} // namespace leasehold
