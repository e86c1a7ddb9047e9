#include "exclusivepatterns.h"

namespace leasehold {

ExclusivePatterns::ExclusivePatterns(const std::vector<std::string> &patterns)
{
    for (const std::string &p : patterns) {
        if (p.empty())
            continue;
        const bool hasScheme = p.find(':') != std::string::npos;
        m_patterns.push_back(hasScheme ? p : "fs:" + p);
    }
}

bool ExclusivePatterns::matches(const ResourceName &name) const
{
    for (const std::string &p : m_patterns) {
        if (globMatch(p, name.canonical()))
            return true;
    }
    return false;
}

bool ExclusivePatterns::globMatch(std::string_view pattern, std::string_view text)
{
    std::size_t p = 0;
    std::size_t t = 0;
    while (p < pattern.size()) {
        const char c = pattern[p];
        if (c == '*') {
            const bool deep = p + 1 < pattern.size() && pattern[p + 1] == '*';
            std::size_t rest = p + (deep ? 2 : 1);
            // "**/" also matches zero segments.
            if (deep && rest < pattern.size() && pattern[rest] == '/' &&
                globMatch(pattern.substr(rest + 1), text.substr(t)))
                return true;
            for (std::size_t k = t; k <= text.size(); ++k) {
                if (globMatch(pattern.substr(rest), text.substr(k)))
                    return true;
                if (k < text.size() && text[k] == '/' && !deep)
                    return false;
            }
            return false;
        }
        if (t >= text.size())
            return false;
        if (c != '?' && c != text[t])
            return false;
        if (c == '?' && text[t] == '/')
            return false;
        ++p;
        ++t;
    }
    return t == text.size();
}

} // namespace leasehold
