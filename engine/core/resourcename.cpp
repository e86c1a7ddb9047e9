#include "resourcename.h"

#include <algorithm>
#include <cstdint>
#include <functional>

namespace leasehold {

namespace {

// Validates UTF-8 and rejects control characters (C0, DEL and C1). Returns an error or "".
std::string checkText(std::string_view text)
{
    const auto *p = reinterpret_cast<const unsigned char *>(text.data());
    const auto *end = p + text.size();
    while (p < end) {
        std::uint32_t cp = *p;
        int extra = 0;
        if (cp < 0x80) {
            extra = 0;
        } else if ((cp & 0xE0) == 0xC0) {
            cp &= 0x1F;
            extra = 1;
        } else if ((cp & 0xF0) == 0xE0) {
            cp &= 0x0F;
            extra = 2;
        } else if ((cp & 0xF8) == 0xF0) {
            cp &= 0x07;
            extra = 3;
        } else {
            return "is not valid UTF-8";
        }
        if (end - p <= extra && extra > 0)
            return "is not valid UTF-8";
        for (int i = 1; i <= extra; ++i) {
            if ((p[i] & 0xC0) != 0x80)
                return "is not valid UTF-8";
            cp = (cp << 6) | (p[i] & 0x3F);
        }
        static constexpr std::uint32_t kMinForLength[] = {0, 0x80, 0x800, 0x10000};
        if (cp < kMinForLength[extra] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return "is not valid UTF-8";
        if (cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp < 0xA0))
            return "contains a control character";
        p += extra + 1;
    }
    return {};
}

// Length of a leading "scheme:" (lower-case letter, then letters, digits, '+', '-', '.'),
// or 0 when the text starts with none.
std::size_t schemeLength(std::string_view text)
{
    if (text.empty() || text[0] < 'a' || text[0] > 'z')
        return 0;
    for (std::size_t i = 1; i < text.size() && i <= 32; ++i) {
        const char c = text[i];
        if (c == ':')
            return i;
        const bool ok =
            (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.';
        if (!ok)
            return 0;
    }
    return 0;
}

// Lexical normalisation: drops empty and '.' segments, resolves '..'. False when '..' would
// climb above the start.
bool normalise(std::string_view text, std::vector<std::string> &out)
{
    std::size_t pos = 0;
    while (pos <= text.size()) {
        std::size_t slash = text.find('/', pos);
        if (slash == std::string_view::npos)
            slash = text.size();
        const std::string_view segment = text.substr(pos, slash - pos);
        if (segment == "..") {
            if (out.empty())
                return false;
            out.pop_back();
        } else if (!segment.empty() && segment != ".") {
            out.emplace_back(segment);
        }
        pos = slash + 1;
    }
    return true;
}

// True when segment[i] is a '\\' escaping the next character (PathPattern's rule).
bool escapesNext(std::string_view segment, std::size_t i)
{
    if (segment[i] != '\\' || i + 1 >= segment.size())
        return false;
    const char next = segment[i + 1];
    return next == '*' || next == '?' || next == '[' || next == ']' || next == '\\';
}

bool isMeta(char c)
{
    return c == '*' || c == '?' || c == '[' || c == ']';
}

// A plain segment as written -> as stored: escapes resolved.
std::string unescape(std::string_view segment)
{
    std::string out;
    out.reserve(segment.size());
    for (std::size_t i = 0; i < segment.size(); ++i) {
        if (escapesNext(segment, i))
            ++i;
        out += segment[i];
    }
    return out;
}

// A stored plain segment -> canonical text that reads back as the same segment: metacharacters
// escaped, and a backslash escaped where it would otherwise escape what follows it.
std::string escape(std::string_view segment)
{
    std::string out;
    out.reserve(segment.size());
    for (std::size_t i = 0; i < segment.size(); ++i) {
        const char c = segment[i];
        const bool beforeSpecial =
            i + 1 < segment.size() && (isMeta(segment[i + 1]) || segment[i + 1] == '\\');
        if (isMeta(c) || (c == '\\' && beforeSpecial))
            out += '\\';
        out += c;
    }
    return out;
}

} // namespace

ResourceName::ResourceName()
{
    static const std::shared_ptr<const Data> empty = std::make_shared<const Data>();
    m_data = empty;
}

ResourceName::ResourceName(std::string scheme, std::vector<std::string> path,
                           std::shared_ptr<const PathPattern> pattern)
{
    auto data = std::make_shared<Data>();
    data->canonical = scheme + ':';
    if (path.empty())
        data->canonical += '.';
    for (std::size_t i = 0; i < path.size(); ++i) {
        if (i)
            data->canonical += '/';
        data->canonical += pattern ? path[i] : escape(path[i]);
    }
    const std::vector<std::string> &key = pattern ? pattern->literalPrefix() : path;
    const std::hash<std::string_view> hash;
    data->hashes.reserve(key.size() + 1);
    data->hashes.push_back(hash(scheme));
    for (const std::string &segment : key)
        data->hashes.push_back(hash(segment));
    data->scheme = std::move(scheme);
    data->path = std::move(path);
    data->pattern = std::move(pattern);
    m_data = std::move(data);
}

bool ResourceName::covers(const ResourceName &other) const
{
    const Data &a = *m_data;
    const Data &b = *other.m_data;
    if (a.scheme != b.scheme)
        return false;
    if (a.pattern) {
        if (b.pattern)
            return a.canonical == b.canonical;
        return a.pattern->covers(b.path);
    }
    // A plain name covers what starts with it: a plain name below it, or a pattern whose
    // literal prefix is below it (everything that pattern matches is).
    const std::vector<std::string> &target = other.key();
    if (a.path.size() > target.size())
        return false;
    for (std::size_t i = 0; i < a.path.size(); ++i) {
        if (a.path[i] != target[i])
            return false;
    }
    return true;
}

bool ResourceName::overlaps(const ResourceName &other) const
{
    const Data &a = *m_data;
    const Data &b = *other.m_data;
    if (a.scheme != b.scheme)
        return false;
    if (!a.pattern && !b.pattern)
        return covers(other) || other.covers(*this);
    if (a.pattern && b.pattern) // two patterns: a name both match (docs/protocol.md, Patterns)
        return a.pattern->sharesName(*b.pattern);
    return a.pattern ? a.pattern->collides(b.path) : b.pattern->collides(a.path);
}

ResourceParser::ResourceParser(std::string workspaceRoot)
    : m_rootText(std::move(workspaceRoot))
{
    if (!m_rootText.empty())
        normalise(m_rootText, m_root);
}

std::string ResourceParser::literalPath(std::string_view path)
{
    std::string out;
    std::size_t from = 0;
    while (from <= path.size()) {
        const std::size_t slash = std::min(path.find('/', from), path.size());
        out += escape(path.substr(from, slash - from));
        if (slash == path.size())
            break;
        out += '/';
        from = slash + 1;
    }
    return out;
}

ParsedName ResourceParser::parseFilePath(std::string_view path) const
{
    return parse("fs:" + literalPath(path));
}

ParsedName ResourceParser::parse(std::string_view text) const
{
    ParsedName parsed = parseText(text);
    // A name is stored, shown and restored by its canonical text, which must read back: one
    // that grows past the limit when written out (the `fs:` it gains, its escapes) is refused
    // now rather than lost when a restart reads it again.
    if (const auto *name = std::get_if<ResourceName>(&parsed);
        name && name->canonical().size() > kMaxNameBytes)
        return NameError{"is longer than 1024 bytes when written in full (" +
                         std::to_string(name->canonical().size()) + " bytes as " + name->scheme() +
                         ": with its escapes)"};
    return parsed;
}

ParsedName ResourceParser::parseText(std::string_view text) const
{
    if (text.empty())
        return NameError{"is empty"};
    if (text.size() > kMaxNameBytes)
        return NameError{"is longer than 1024 bytes"};
    if (std::string problem = checkText(text); !problem.empty())
        return NameError{std::move(problem)};

    std::string scheme = "fs";
    std::string_view rest = text;
    if (const std::size_t n = schemeLength(text); n > 0) {
        scheme.assign(text.substr(0, n));
        rest = text.substr(n + 1);
    }

    std::vector<std::string> path;
    if (scheme == "fs" && !rest.empty() && rest.front() == '/') {
        if (m_rootText.empty())
            return NameError{"is an absolute path, but no workspace root is configured"};
        std::vector<std::string> absolute;
        if (!normalise(rest, absolute) || absolute.size() < m_root.size())
            return NameError{"is outside the workspace root"};
        for (std::size_t i = 0; i < m_root.size(); ++i) {
            if (absolute[i] != m_root[i])
                return NameError{"is outside the workspace root"};
        }
        path.assign(absolute.begin() + static_cast<std::ptrdiff_t>(m_root.size()), absolute.end());
    } else if (!normalise(rest, path)) {
        return NameError{scheme == "fs" ? "escapes the workspace root"
                                        : "climbs above its scheme with '..'"};
    }
    if (path.empty() && scheme != "fs")
        return NameError{"names no resource after '" + scheme + ":'"};
    bool pattern = false;
    for (const std::string &segment : path)
        pattern = pattern || segment == "**" || PathPattern::isPattern(segment);
    if (pattern) {
        std::string problem;
        std::optional<PathPattern> parsed = PathPattern::parse(path, &problem);
        if (!parsed)
            return NameError{"is not a valid pattern: " + problem};
        return ResourceName(std::move(scheme), std::move(path),
                            std::make_shared<const PathPattern>(std::move(*parsed)));
    }
    for (std::string &segment : path)
        segment = unescape(segment);
    return ResourceName(std::move(scheme), std::move(path));
}

} // namespace leasehold
