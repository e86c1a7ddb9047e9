#pragma once

#include "pathpattern.h"

#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace leasehold {

// A resource in canonical form: a scheme and a path of '/'-separated segments.
//
//   "lock:deploy/production"  -> scheme "lock", path {"deploy", "production"}
//   "src//app.cpp/"           -> scheme "fs",   path {"src", "app.cpp"}   ("fs:src/app.cpp")
//   "fs:."                    -> scheme "fs",   path {}  (the whole workspace)
//   "src/**/*.ts"             -> a pattern (PathPattern): every name it matches
//
// Names are hierarchical: a resource covers itself and every resource below it in the same
// scheme. A path segment holding an unescaped `*`, `?` or `[`, or a whole segment `**`, makes
// the name a pattern; `\*`, `\?`, `\[`, `\]` and `\\` are those characters in a plain name
// (which stores its segments unescaped and escapes them again in its canonical text). Values
// are immutable and share their text, so copying one costs a reference count.
class ResourceName
{
public:
    ResourceName();

    const std::string &canonical() const { return m_data->canonical; }
    const std::string &scheme() const { return m_data->scheme; }
    // A plain name's segments, unescaped; a pattern's, as written.
    const std::vector<std::string> &path() const { return m_data->path; }
    // Where the name sits in the trie: a plain name's path, a pattern's literal prefix.
    const std::vector<std::string> &key() const
    {
        return m_data->pattern ? m_data->pattern->literalPrefix() : m_data->path;
    }
    // std::hash<std::string_view> of the scheme, then of each segment of key(), computed once
    // so the trie never hashes a name twice.
    const std::vector<std::size_t> &segmentHashes() const { return m_data->hashes; }
    bool isWorkspacePath() const { return m_data->scheme == "fs"; }
    bool isPattern() const { return m_data->pattern != nullptr; }
    const PathPattern *pattern() const { return m_data->pattern.get(); }

    // True when a lease on this name covers everything `other` names: it equals `other` or is
    // an ancestor (plain); a pattern covers a plain name below one it matches, and another
    // pattern only when the two are the same text.
    bool covers(const ResourceName &other) const;
    // True when two leases on these names collide: for plain names, when one covers the
    // other; for a pattern and a plain name, when the pattern matches the name, a name above
    // it or one below it; for two patterns, when some name matches both. Decided on the
    // patterns' automata (PathPattern). Every write is still checked against every other
    // agent's lease by the plain-name rule, so no two agents ever write one name.
    bool overlaps(const ResourceName &other) const;

    friend bool operator==(const ResourceName &a, const ResourceName &b)
    {
        return a.m_data == b.m_data || a.m_data->canonical == b.m_data->canonical;
    }

private:
    friend class ResourceParser;
    ResourceName(std::string scheme, std::vector<std::string> path,
                 std::shared_ptr<const PathPattern> pattern = nullptr);

    struct Data
    {
        std::string scheme;
        std::vector<std::string> path;
        std::string canonical;
        std::vector<std::size_t> hashes;
        std::shared_ptr<const PathPattern> pattern; // null for a plain name
    };
    std::shared_ptr<const Data> m_data;
};

// Why a name was rejected, in words a caller can act on ("path escapes the workspace root").
struct NameError
{
    std::string message;
};

using ParsedName = std::variant<ResourceName, NameError>;

// Turns caller-supplied text into ResourceNames. Bare paths mean the "fs" scheme; workspace
// paths are normalised lexically ('.', '..', repeated and trailing '/') and may not leave the
// root. An absolute path is accepted only inside the configured workspace root.
//
// Thread-safety: immutable after construction; safe to share.
class ResourceParser
{
public:
    static constexpr std::size_t kMaxNameBytes = 1024;

    // `workspaceRoot` is an absolute directory, or empty when no workspace is configured.
    explicit ResourceParser(std::string workspaceRoot = {});

    ParsedName parse(std::string_view text) const;
    // The text that names file path `path` ('/'-separated) as a plain name, never a pattern:
    // its metacharacters escaped (a file may be called "a*b").
    static std::string literalPath(std::string_view path);
    // File path `path` (relative to the root, or absolute) as a workspace name, taken literally:
    // `fs:` + literalPath, so neither a metacharacter nor a ':' in a file name ("x:/y", a
    // folder called "lock:") changes what it names.
    ParsedName parseFilePath(std::string_view path) const;
    const std::string &workspaceRoot() const { return m_rootText; }

private:
    ParsedName parseText(std::string_view text) const;
    std::string m_rootText;
    std::vector<std::string> m_root;
};

} // namespace leasehold
