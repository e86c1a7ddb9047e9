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
    case Via::Fs:
        return "fs";
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

std::vector<Via> viaMembers(ViaSet set)
{
    std::vector<Via> out;
    for (int i = 0; i < kViaCount; ++i)
        if (set & (1 << i))
            out.push_back(Via(1 << i));
    return out;
}

std::string viaList(ViaSet set)
{
    std::string out;
    for (const Via via : viaMembers(set))
        out += (out.empty() ? "" : ", ") + std::string(viaName(via));
    return out;
}

} // namespace leasehold
