// Resource names and patterns from outside bytes: ResourceParser::parse, PathPattern and the
// overlap rules. The input is one name, or two separated by a newline. Asserted for every name
// that parses:
//   - its canonical text parses back to the same name, pattern or not;
//   - a file path taken literally ("fs:" + ResourceParser::literalPath, as the guard names a
//     file) is never a pattern, and names the same segments (a ':' in a file name included);
//   - overlaps is symmetric and reflexive; covers implies overlaps;
//   - a pattern that covers a plain name also collides with it.

#include "resourcename.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <variant>

using namespace leasehold;

namespace {

void fail(const char *what, const ResourceName &a, const ResourceName *b = nullptr)
{
    std::fprintf(stderr, "invariant broken: %s: [%s]%s%s%s\n", what, a.canonical().c_str(),
                 b ? " vs [" : "", b ? b->canonical().c_str() : "", b ? "]" : "");
    std::abort();
}

const ResourceParser &parser()
{
    static const ResourceParser p("/srv/work");
    return p;
}

const ResourceName *parsed(std::string_view text, ResourceName &out)
{
    ParsedName r = parser().parse(text);
    if (auto *name = std::get_if<ResourceName>(&r)) {
        out = std::move(*name);
        return &out;
    }
    return nullptr;
}

void checkOne(const ResourceName &n)
{
    ResourceName again;
    if (!parsed(n.canonical(), again) || !(again == n) || again.isPattern() != n.isPattern() ||
        again.path() != n.path())
        fail("canonical text does not read back", n);
    if (!n.overlaps(n))
        fail("a name does not overlap itself", n);
    if (n.isPattern()) {
        if (n.key().size() > n.path().size())
            fail("literal prefix longer than the pattern", n);
        return;
    }
    std::string path;
    for (std::size_t i = 0; i < n.path().size(); ++i)
        path += (i ? "/" : "") + n.path()[i];
    ResourceName literal;
    if (n.isWorkspacePath() && !n.path().empty() &&
        parsed("fs:" + ResourceParser::literalPath(path), literal) &&
        (literal.isPattern() || literal.path() != n.path()))
        fail("a literal path is not the same plain name", n, &literal);
}

void checkPair(const ResourceName &a, const ResourceName &b)
{
    const bool ab = a.overlaps(b);
    if (ab != b.overlaps(a))
        fail("overlaps is not symmetric", a, &b);
    if ((a.covers(b) || b.covers(a)) && !ab)
        fail("covers without overlapping", a, &b);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    if (size > 4096)
        return 0;
    const std::string_view input(reinterpret_cast<const char *>(data), size);
    const std::size_t newline = input.find('\n');
    ResourceName a, b;
    const ResourceName *first = parsed(input.substr(0, newline), a);
    const ResourceName *second =
        newline == std::string_view::npos ? nullptr : parsed(input.substr(newline + 1), b);
    if (first)
        checkOne(*first);
    if (second)
        checkOne(*second);
    if (first && second)
        checkPair(*first, *second);
    return 0;
}
