#include "pathpattern.h"

#include <algorithm>
#include <deque>

namespace leasehold {

namespace {

// Every byte a segment may hold: all but '/'.
std::bitset<256> anyByte()
{
    std::bitset<256> all;
    all.set();
    all.reset('/');
    return all;
}

std::bitset<256> oneByte(unsigned char c)
{
    std::bitset<256> one;
    one.set(c);
    return one;
}

// True when text[i] is a '\\' that escapes the next character: a metacharacter or '\\'. Any
// other backslash is itself (names with backslashes keep their meaning).
bool escapes(std::string_view text, std::size_t i)
{
    if (text[i] != '\\' || i + 1 >= text.size())
        return false;
    const char next = text[i + 1];
    return next == '*' || next == '?' || next == '[' || next == ']' || next == '\\';
}

// A literal segment, unescaped: nothing when it holds a wildcard.
std::optional<std::string> literalText(std::string_view text)
{
    std::string out;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '*' || c == '?' || c == '[')
            return std::nullopt;
        if (escapes(text, i))
            ++i;
        out += text[i];
    }
    return out;
}

// Reads a class starting at text[i] == '['; returns the index after its ']' (0 if unbalanced).
std::size_t readClass(std::string_view text, std::size_t i, std::bitset<256> &chars)
{
    std::size_t j = i + 1;
    bool negate = false;
    if (j < text.size() && (text[j] == '!' || text[j] == '^')) {
        negate = true;
        ++j;
    }
    bool first = true;
    for (; j < text.size(); first = false) {
        unsigned char c = static_cast<unsigned char>(text[j]);
        if (c == ']' && !first)
            break;
        if (escapes(text, j))
            c = static_cast<unsigned char>(text[++j]);
        ++j;
        if (j + 1 < text.size() && text[j] == '-' && text[j + 1] != ']') {
            unsigned char last = static_cast<unsigned char>(text[j + 1]);
            std::size_t after = j + 2;
            if (escapes(text, j + 1)) {
                last = static_cast<unsigned char>(text[j + 2]);
                after = j + 3;
            }
            for (unsigned v = c; v <= last; ++v)
                chars.set(v);
            j = after;
        } else {
            chars.set(c);
        }
    }
    if (j >= text.size())
        return 0;
    if (negate)
        chars.flip();
    chars.reset('/');
    return j + 1;
}

} // namespace

bool PathPattern::isPattern(std::string_view text)
{
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (escapes(text, i))
            ++i;
        else if (text[i] == '*' || text[i] == '?' || text[i] == '[')
            return true;
    }
    return false;
}

std::optional<PathPattern::Segment> PathPattern::parseSegment(std::string_view text,
                                                              std::string *problem)
{
    Segment segment;
    segment.text = std::string(text);
    for (std::size_t i = 0; i < text.size();) {
        const char c = text[i];
        Element element;
        if (escapes(text, i)) {
            element.chars = oneByte(static_cast<unsigned char>(text[i + 1]));
            i += 2;
        } else if (c == '*') {
            while (i < text.size() && text[i] == '*')
                ++i; // "a**b" is "a*b": only a whole segment "**" spans segments
            element.chars = anyByte();
            element.run = true;
        } else if (c == '?') {
            element.chars = anyByte();
            ++i;
        } else if (c == '[') {
            const std::size_t end = readClass(text, i, element.chars);
            if (end == 0) {
                *problem = "unbalanced '[' in \"" + std::string(text) + "\"";
                return std::nullopt;
            }
            if (element.chars.none()) {
                *problem = "the class in \"" + std::string(text) + "\" matches no character";
                return std::nullopt;
            }
            i = end;
        } else {
            element.chars = oneByte(static_cast<unsigned char>(c));
            ++i;
        }
        segment.elements.push_back(element);
    }
    if (segment.elements.empty()) {
        *problem = "an empty segment";
        return std::nullopt;
    }
    // The extension: single known bytes (none a '.') back to an element that is exactly '.'.
    // Every match ends with that dot and those bytes, so its last '.' is that one.
    std::string tail;
    for (auto e = segment.elements.rbegin(); e != segment.elements.rend(); ++e) {
        if (e->run || e->chars.count() != 1)
            break;
        const char c = char(e->chars._Find_first());
        if (c == '.') {
            std::reverse(tail.begin(), tail.end());
            segment.extension = std::move(tail);
            break;
        }
        tail.push_back(c);
    }
    return segment;
}

std::optional<PathPattern> PathPattern::parse(const std::vector<std::string> &segments,
                                              std::string *problem)
{
    if (segments.size() > kMaxSegments) {
        *problem = "a pattern has at most " + std::to_string(kMaxSegments) + " segments";
        return std::nullopt;
    }
    PathPattern pattern;
    std::size_t elements = 0;
    bool literal = true;
    for (std::size_t i = 0; i < segments.size(); ++i) {
        const std::string &text = segments[i];
        Segment segment;
        if (text == "**") {
            segment.anyDepth = true;
            pattern.m_anyDepth = true;
            segment.text = text;
            ++elements;
        } else {
            std::optional<Segment> parsed = parseSegment(text, problem);
            if (!parsed) {
                *problem = "segment " + std::to_string(i + 1) + ": " + *problem;
                return std::nullopt;
            }
            segment = std::move(*parsed);
            segment.literal = literalText(segment.text);
            elements += segment.elements.size();
        }
        if (elements > kMaxElements) {
            *problem = "a pattern is at most " + std::to_string(kMaxElements) +
                       " characters, classes and wildcards";
            return std::nullopt;
        }
        literal = literal && segment.literal.has_value();
        if (literal)
            pattern.m_prefix.push_back(*segment.literal);
        pattern.m_segments.push_back(std::move(segment));
    }
    return pattern;
}

bool PathPattern::segmentMatches(const Segment &glob, std::string_view segment)
{
    if (glob.anyDepth)
        return true;
    if (glob.literal)
        return *glob.literal == segment;
    // Every run is a `*` (any bytes), so the classic two-pointer match with one backtrack
    // point is exact: on a mismatch, let the latest `*` swallow one more character.
    const std::vector<Element> &e = glob.elements;
    // Most segments fail on their first or last character (`*.ts` against `file7`).
    if (segment.empty() ||
        (!e.front().run && !e.front().chars.test(static_cast<unsigned char>(segment.front()))) ||
        (!e.back().run && !e.back().chars.test(static_cast<unsigned char>(segment.back()))))
        return false;
    constexpr std::size_t kNone = std::size_t(-1);
    std::size_t p = 0, i = 0, starP = kNone, starI = 0;
    while (i < segment.size()) {
        if (p < e.size() && e[p].run) {
            starP = p++;
            starI = i;
        } else if (p < e.size() && e[p].chars.test(static_cast<unsigned char>(segment[i]))) {
            ++p;
            ++i;
        } else if (starP != kNone) {
            p = starP + 1;
            i = ++starI;
        } else {
            return false;
        }
    }
    while (p < e.size() && e[p].run)
        ++p;
    return p == e.size();
}

bool PathPattern::segmentsIntersect(const Segment &a, const Segment &b)
{
    if (a.anyDepth || b.anyDepth)
        return true; // every glob matches some (non-empty) segment
    // States (p, q, consumed): both globs read the same characters; a segment is never empty.
    const std::size_t na = a.elements.size(), nb = b.elements.size();
    std::vector<char> seen((na + 1) * (nb + 1) * 2, 0);
    std::deque<std::size_t> todo;
    const auto visit = [&](std::size_t p, std::size_t q, std::size_t consumed) {
        const std::size_t key = (p * (nb + 1) + q) * 2 + consumed;
        if (!seen[key]) {
            seen[key] = 1;
            todo.push_back(key);
        }
    };
    visit(0, 0, 0);
    while (!todo.empty()) {
        const std::size_t key = todo.front();
        todo.pop_front();
        const std::size_t consumed = key % 2, q = (key / 2) % (nb + 1), p = key / 2 / (nb + 1);
        if (p == na && q == nb && consumed)
            return true;
        if (p < na && a.elements[p].run)
            visit(p + 1, q, consumed);
        if (q < nb && b.elements[q].run)
            visit(p, q + 1, consumed);
        if (p < na && q < nb && (a.elements[p].chars & b.elements[q].chars).any())
            visit(a.elements[p].run ? p : p + 1, b.elements[q].run ? q : q + 1, 1);
    }
    return false;
}

PathPattern::Positions PathPattern::closed(Positions at) const
{
    if (!m_anyDepth)
        return at;
    for (std::size_t k = 0; k < m_segments.size(); ++k)
        if (at.test(k) && m_segments[k].anyDepth)
            at.set(k + 1); // `**` may read no segment
    return at;
}

PathPattern::Positions PathPattern::start() const
{
    Positions at;
    at.set(0);
    return closed(at);
}

PathPattern::Positions PathPattern::advance(const Positions &at, std::string_view segment) const
{
    Positions next;
    const std::size_t n = m_segments.size();
    for (std::size_t k = at._Find_first(); k < n; k = at._Find_next(k)) {
        if (m_segments[k].anyDepth)
            next[k] = true;
        else if (segmentMatches(m_segments[k], segment))
            next[k + 1] = true;
    }
    return m_anyDepth ? closed(next) : next;
}

bool PathPattern::matches(const std::vector<std::string> &path) const
{
    Positions at = start();
    for (std::size_t i = 0; i < path.size() && at.any(); ++i)
        at = advance(at, path[i]);
    return accepts(at);
}

bool PathPattern::covers(const std::vector<std::string> &path) const
{
    Positions at = start();
    for (std::size_t i = 0; !accepts(at); ++i) {
        if (i == path.size() || at.none())
            return false;
        at = advance(at, path[i]);
    }
    return true;
}

bool PathPattern::collides(const PathPattern &other) const
{
    return meet(other, true);
}

bool PathPattern::sharesName(const PathPattern &other) const
{
    return meet(other, false);
}

bool PathPattern::meet(const PathPattern &other, bool below) const
{
    // A path through the product of the two segment automata, where a step reads one segment
    // both can read. With `below`, each pattern is followed by `**`: what is below a match.
    static const Segment kBelow = [] {
        Segment any;
        any.anyDepth = true;
        any.text = "**";
        return any;
    }();
    std::vector<const Segment *> a, b;
    for (const Segment &s : m_segments)
        a.push_back(&s);
    for (const Segment &s : other.m_segments)
        b.push_back(&s);
    if (below) {
        a.push_back(&kBelow);
        b.push_back(&kBelow);
    }
    const std::size_t na = a.size(), nb = b.size();
    std::vector<char> seen((na + 1) * (nb + 1), 0);
    std::deque<std::pair<std::size_t, std::size_t>> todo;
    const auto visit = [&](std::size_t i, std::size_t j) {
        if (!seen[i * (nb + 1) + j]) {
            seen[i * (nb + 1) + j] = 1;
            todo.emplace_back(i, j);
        }
    };
    visit(0, 0);
    while (!todo.empty()) {
        const auto [i, j] = todo.front();
        todo.pop_front();
        if (i == na && j == nb)
            return true;
        if (i < na && a[i]->anyDepth)
            visit(i + 1, j);
        if (j < nb && b[j]->anyDepth)
            visit(i, j + 1);
        if (i < na && j < nb && segmentsIntersect(*a[i], *b[j]))
            visit(a[i]->anyDepth ? i : i + 1, b[j]->anyDepth ? j : j + 1);
    }
    return false;
}

bool PathPattern::collides(const std::vector<std::string> &path) const
{
    // It covers `path` (a match at or above it), or a match lies below it: some position is
    // still alive after the whole path (every segment glob matches some segment).
    Positions at = start();
    for (const std::string &segment : path) {
        if (accepts(at))
            return true;
        at = advance(at, segment);
    }
    return at.any();
}

} // namespace leasehold
