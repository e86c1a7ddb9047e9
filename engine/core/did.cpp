#include "did.h"

namespace leasehold {

namespace {

bool isMethodChar(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

} // namespace

std::string didProblem(std::string_view did)
{
    constexpr const char *shape = " (a DID such as did:agent:claude-1)";
    if (did.empty())
        return std::string("is empty") + shape;
    if (did.size() > kMaxDidBytes)
        return "is longer than " + std::to_string(kMaxDidBytes) + " bytes";
    for (const char c : did) {
        const auto u = static_cast<unsigned char>(c);
        if (u == ' ' || u == '\t' || u == '\n' || u == '\r' || u == '\v' || u == '\f')
            return "may not contain whitespace";
        if (u < 0x20 || u == 0x7f)
            return "may not contain control characters";
        if (u > 0x7e)
            return "must be printable ASCII (percent-encode anything else)";
        if (c == '=' || c == ',')
            return std::string("may not contain '") + c + "'";
    }
    if (did.substr(0, 4) != "did:")
        return std::string("must start with did:") + shape;
    const std::size_t colon = did.find(':', 4);
    if (colon == std::string_view::npos || colon == 4)
        return std::string("needs a method and a name") + shape;
    for (const char c : did.substr(4, colon - 4)) {
        if (!isMethodChar(c))
            return std::string("has a method that is not lower-case letters and digits") + shape;
    }
    if (colon + 1 == did.size())
        return std::string("has an empty name") + shape;
    if (did.back() == ':')
        return "may not end with ':'";
    return {};
}

} // namespace leasehold
