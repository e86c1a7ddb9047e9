#include "via.h"

namespace leasehold {

std::string_view viaName(Via via)
{
    switch (via) {
    case Via::Mcp:
        return "mcp";
    case Via::Rest:
        return "rest";
    case Via::Guard:
        return "guard";
    case Via::Hook:
        return "hook";
    case Via::Git:
        return "git";
    }
    return "rest";
}

std::optional<Via> viaFromName(std::string_view name)
{
    for (int i = 0; i < kViaCount; ++i) {
        const Via via = Via(1 << i);
        if (viaName(via) == name)
            return via;
    }
    return std::nullopt;
}

std::string viaList(ViaSet set)
{
    std::string out;
    for (int i = 0; i < kViaCount; ++i) {
        if (!(set & (1 << i)))
            continue;
        if (!out.empty())
            out += ", ";
        out += viaName(Via(1 << i));
    }
    return out;
}

} // namespace leasehold
