#include "bruteoverlap.h"

#include <map>
#include <string_view>

namespace leasehold::test {

namespace {

const std::vector<std::string> kSchemes = {"lock", "fs"};
// "a.ts" and "c.cpp": names with an extension, for the globs that fix one (`*.ts`).
const std::vector<std::string> kSegments = {"a", "b", "1", "2",    "src",  "x",
                                            "y", "z", "c", "a.ts", "c.cpp"};

// One character class at text[i] == '['; returns the index after ']' and whether c is in it.
std::size_t inClass(std::string_view text, std::size_t i, char c, bool &in)
{
    std::size_t j = i + 1;
    bool negate = false;
    if (j < text.size() && (text[j] == '!' || text[j] == '^')) {
        negate = true;
        ++j;
    }
    bool found = false;
    for (bool first = true; j < text.size(); first = false) {
        if (text[j] == ']' && !first)
            break;
        char lo = text[j];
        if (lo == '\\' && j + 1 < text.size())
            lo = text[++j];
        char hi = lo;
        ++j;
        if (j + 1 < text.size() && text[j] == '-' && text[j + 1] != ']') {
            hi = text[j + 1];
            j += 2;
        }
        found = found || (c >= lo && c <= hi);
    }
    in = negate ? !found : found;
    return j + 1;
}

// Backtracking glob match of one segment (no '/' in either).
bool matchSegment(std::string_view glob, std::string_view text)
{
    if (glob.empty())
        return text.empty();
    const char g = glob[0];
    if (g == '*') {
        std::size_t stars = 1;
        while (stars < glob.size() && glob[stars] == '*')
            ++stars;
        for (std::size_t k = 0; k <= text.size(); ++k)
            if (matchSegment(glob.substr(stars), text.substr(k)))
                return true;
        return false;
    }
    if (text.empty())
        return false;
    if (g == '?')
        return matchSegment(glob.substr(1), text.substr(1));
    if (g == '[') {
        bool in = false;
        const std::size_t next = inClass(glob, 0, text[0], in);
        return in && matchSegment(glob.substr(next), text.substr(1));
    }
    if (g == '\\' && glob.size() > 1 &&
        std::string_view("*?[]\\").find(glob[1]) != std::string_view::npos)
        return glob[1] == text[0] && matchSegment(glob.substr(2), text.substr(1));
    return g == text[0] && matchSegment(glob.substr(1), text.substr(1));
}

bool matchPath(const std::vector<std::string> &glob, std::size_t gi,
               const std::vector<std::string> &path, std::size_t pi)
{
    if (gi == glob.size())
        return pi == path.size();
    if (glob[gi] == "**")
        for (std::size_t k = pi; k <= path.size(); ++k)
            if (matchPath(glob, gi + 1, path, k))
                return true;
    if (glob[gi] == "**")
        return false;
    return pi < path.size() && matchSegment(glob[gi], path[pi]) &&
           matchPath(glob, gi + 1, path, pi + 1);
}

std::vector<std::vector<std::string>> universe()
{
    std::vector<std::vector<std::string>> out = {{}};
    for (std::size_t depth = 0, from = 0; depth < 4; ++depth) {
        const std::size_t to = out.size();
        for (std::size_t i = from; i < to; ++i)
            for (const std::string &s : kSegments) {
                auto longer = out[i];
                longer.push_back(s);
                out.push_back(std::move(longer));
            }
        from = to;
    }
    return out;
}

} // namespace

bool bruteCovers(const ResourceName &lease, const std::string &scheme,
                 const std::vector<std::string> &path)
{
    if (lease.scheme() != scheme)
        return false;
    for (std::size_t length = 0; length <= path.size(); ++length) {
        const std::vector<std::string> prefix(path.begin(), path.begin() + std::ptrdiff_t(length));
        if (lease.isPattern() ? matchPath(lease.path(), 0, prefix, 0) : lease.path() == prefix)
            return true;
    }
    return false;
}

bool bruteOverlaps(const ResourceName &a, const ResourceName &b)
{
    static const std::vector<std::vector<std::string>> names = universe();
    static std::map<std::pair<std::string, std::string>, bool> known;
    const auto key = std::make_pair(a.canonical(), b.canonical());
    if (const auto it = known.find(key); it != known.end())
        return it->second;
    // Two patterns: a name both match. Otherwise: a name both cover (the hierarchy).
    const bool bothPatterns = a.isPattern() && b.isPattern();
    bool shared = false;
    for (const std::string &scheme : kSchemes)
        for (const auto &path : names)
            if (!shared && scheme == a.scheme() && scheme == b.scheme())
                shared = bothPatterns
                             ? matchPath(a.path(), 0, path, 0) && matchPath(b.path(), 0, path, 0)
                             : bruteCovers(a, scheme, path) && bruteCovers(b, scheme, path);
    known.emplace(key, shared);
    return shared;
}

} // namespace leasehold::test
