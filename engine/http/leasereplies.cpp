#include "leasereplies.h"

#include "mode.h"

#include <nlohmann/json.hpp>

#include <charconv>
#include <string_view>

namespace leasehold {

namespace {

// Appends `text` as a JSON string, escaped as nlohmann::json::dump() escapes it. False when a
// byte is not ASCII: nothing then needs to be exact about UTF-8 here.
bool appendString(std::string &out, std::string_view text)
{
    static constexpr char kHex[] = "0123456789abcdef";
    out += '"';
    for (const char c : text) {
        const auto byte = static_cast<unsigned char>(c);
        switch (c) {
        case '"':
            out += "\\\"";
            break;
        case '\\':
            out += "\\\\";
            break;
        case '\b':
            out += "\\b";
            break;
        case '\f':
            out += "\\f";
            break;
        case '\n':
            out += "\\n";
            break;
        case '\r':
            out += "\\r";
            break;
        case '\t':
            out += "\\t";
            break;
        default:
            if (byte >= 0x80)
                return false;
            if (byte < 0x20) {
                out += "\\u00";
                out += kHex[byte >> 4];
                out += kHex[byte & 0xf];
            } else {
                out += c;
            }
        }
    }
    out += '"';
    return true;
}

template<class Integer> void appendInteger(std::string &out, Integer value)
{
    char digits[24];
    const auto end = std::to_chars(digits, digits + sizeof digits, value).ptr;
    out.append(digits, end);
}

// Keys in the order a JSON object (a sorted map) dumps them.
bool appendLease(std::string &out, const LeaseInfo &l)
{
    out += "{\"expiresAt\":";
    appendInteger(out, l.expiresAt);
    if (l.extended)
        out += ",\"extended\":true";
    out += ",\"grantedAt\":";
    appendInteger(out, l.grantedAt);
    out += ",\"holder\":";
    if (!appendString(out, l.holder))
        return false;
    out += ",\"leaseId\":";
    if (!appendString(out, l.leaseId))
        return false;
    if (l.lockDelayMs > 0) {
        out += ",\"lockDelayMs\":";
        appendInteger(out, l.lockDelayMs);
    }
    out += ",\"mode\":";
    appendString(out, modeName(l.mode));
    if (l.pendingRelease)
        out += ",\"pendingRelease\":true";
    if (l.pins > 0) {
        out += ",\"pins\":";
        appendInteger(out, l.pins);
    }
    out += ",\"resource\":";
    if (!appendString(out, l.resource))
        return false;
    out += ",\"token\":";
    appendInteger(out, l.token);
    out += ",\"ttlMs\":";
    appendInteger(out, l.ttlMs);
    out += '}';
    return true;
}

bool appendLeases(std::string &out, const std::vector<LeaseInfo> &leases)
{
    out += '[';
    for (std::size_t i = 0; i < leases.size(); ++i) {
        if (i > 0)
            out += ',';
        if (!appendLease(out, leases[i]))
            return false;
    }
    out += ']';
    return true;
}

} // namespace

std::optional<std::string> grantJson(const Grant &grant)
{
    if (grant.leases.empty())
        return std::nullopt;
    std::string out;
    out.reserve(512 * grant.leases.size() + 64);
    // The first lease is written twice, as `lease` and inside `leases`, rather than copied out
    // of the bytes: the array is then written as the release answer writes its own.
    out += "{\"lease\":";
    if (!appendLease(out, grant.leases.front()))
        return std::nullopt;
    out += ",\"leases\":";
    if (!appendLeases(out, grant.leases))
        return std::nullopt;
    out += ",\"ok\":true";
    if (grant.waitedMs > 0) {
        out += ",\"waitedMs\":";
        appendInteger(out, grant.waitedMs);
    }
    out += '}';
    return out;
}

std::optional<std::string> releasedJson(const Released &released)
{
    std::string out;
    out.reserve(512 * released.released.size() + 64);
    out += "{\"ok\":true,\"released\":";
    if (!appendLeases(out, released.released))
        return std::nullopt;
    // A number as the tree writes it (its own shortest form), not re-derived here.
    out += ",\"trust\":";
    out += nlohmann::json(released.trust).dump();
    out += '}';
    return out;
}

} // namespace leasehold
