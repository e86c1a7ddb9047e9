#pragma once

#include <bitset>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace leasehold {

// The path part of a pattern resource name, gitignore-style, over '/'-separated segments:
//
//   *       any run of characters within one segment (possibly none)
//   ?       one character
//   [abc]   one character of the class; ranges (a-z), negation ([!a-z]); ']' first is literal
//   **      as a whole segment: any number of whole segments (possibly none); elsewhere, '*'
//   \*  \?  \[  \]  \\   the character itself; any other backslash is a backslash
//
// Leases are hierarchical: a lease on a name covers every name below it, so a pattern lease
// covers every name below any name it matches. Two leases collide exactly when some name is
// covered by both; `collides` decides it on the two patterns' automata (a segment-level
// product, whose steps need a character-level product of two segment globs to be non-empty),
// never by matching one pattern's text against the other.
//
// Bounded: at most kMaxSegments segments and kMaxElements elements (characters, classes,
// wildcards) in all, so every decision is cheap (at most (64+1)^2 segment pairs, each a product
// of two small segment automata).
//
// Thread-safety: immutable after construction.
class PathPattern
{
public:
    static constexpr std::size_t kMaxSegments = 64;
    static constexpr std::size_t kMaxElements = 512;

    // One segment glob: a sequence of elements, each one character of a set, or a run (`*`).
    struct Element
    {
        std::bitset<256> chars; // the bytes it may be
        bool run = false;       // any number of them (a `*`), else exactly one
    };
    struct Segment
    {
        bool anyDepth = false;              // `**`: any number of whole segments
        std::vector<Element> elements;      // when not anyDepth
        std::string text;                   // as written
        std::optional<std::string> literal; // unescaped, when it has no wildcard
        // What follows the last '.' of every name it matches, when the glob fixes it: `*.ts`
        // and `test_*.ts` give "ts"; `*.t?`, `*` and `[.]x` give nothing.
        std::optional<std::string> extension;
    };
    // Where a match may stand after reading some leading segments of a name: bit i set when
    // the first i pattern segments can have been consumed. Cheap to copy; no allocation.
    using Positions = std::bitset<kMaxSegments + 1>;

    // `segments` as split by the resource parser. Nothing, with `problem` saying what is wrong
    // ("segment 2: unbalanced '['", "at most 64 segments"), when it is malformed.
    static std::optional<PathPattern> parse(const std::vector<std::string> &segments,
                                            std::string *problem);
    // True when `text` holds an unescaped metacharacter (*, ?, [): a pattern, not a plain name.
    static bool isPattern(std::string_view text);

    // True when `path` is one of the names the pattern matches.
    bool matches(const std::vector<std::string> &path) const;
    // True when a lease on this pattern covers `path`: it matches `path` or a name above it.
    bool covers(const std::vector<std::string> &path) const;
    // True when some name is covered both by a lease on this pattern and by one on `other`
    // (each pattern's matches and everything below them).
    bool collides(const PathPattern &other) const;
    // True when some name matches both patterns (no hierarchy): the rule between two pattern
    // leases (ResourceName::overlaps).
    bool sharesName(const PathPattern &other) const;
    // True when some name is covered both by a lease on this pattern and by one on the plain
    // name `path` (it covers `path`, or matches something below it).
    bool collides(const std::vector<std::string> &path) const;

    // Step by step, as a trie walk reads a name: the positions before any segment, after one
    // more segment, and whether a position means the name read so far matches.
    Positions start() const;
    Positions advance(const Positions &at, std::string_view segment) const;
    bool accepts(const Positions &at) const { return at.test(m_segments.size()); }

    // The leading segments without wildcards, unescaped: where the pattern sits in the tree.
    const std::vector<std::string> &literalPrefix() const { return m_prefix; }
    const std::vector<Segment> &segments() const { return m_segments; }

    // One segment glob parsed (not `**`); exposed for the tests.
    static std::optional<Segment> parseSegment(std::string_view text, std::string *problem);
    static bool segmentMatches(const Segment &glob, std::string_view segment);
    // True when some segment matches both globs.
    static bool segmentsIntersect(const Segment &a, const Segment &b);

private:
    Positions closed(Positions at) const;
    bool meet(const PathPattern &other, bool below) const;

    std::vector<Segment> m_segments;
    std::vector<std::string> m_prefix;
    bool m_anyDepth = false; // some segment is `**`
};

} // namespace leasehold
