#pragma once

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
//
// Names are hierarchical: a resource covers itself and every resource below it in the same
// scheme. Values are immutable and share their text, so copying one costs a reference count.
class ResourceName
{
public:
    ResourceName();

    const std::string &canonical() const { return m_data->canonical; }
    const std::string &scheme() const { return m_data->scheme; }
    const std::vector<std::string> &path() const { return m_data->path; }
    // std::hash<std::string_view> of the scheme, then of each path segment, computed once so
    // the trie never hashes a name twice.
    const std::vector<std::size_t> &segmentHashes() const { return m_data->hashes; }
    bool isWorkspacePath() const { return m_data->scheme == "fs"; }

    // True when this name equals `other` or is one of its ancestors.
    bool covers(const ResourceName &other) const;
    // True when one of the two covers the other: the only way two leases can collide.
    bool overlaps(const ResourceName &other) const { return covers(other) || other.covers(*this); }

    friend bool operator==(const ResourceName &a, const ResourceName &b)
    {
        return a.m_data == b.m_data || a.m_data->canonical == b.m_data->canonical;
    }

private:
    friend class ResourceParser;
    ResourceName(std::string scheme, std::vector<std::string> path);

    struct Data
    {
        std::string scheme;
        std::vector<std::string> path;
        std::string canonical;
        std::vector<std::size_t> hashes;
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
    const std::string &workspaceRoot() const { return m_rootText; }

private:
    std::string m_rootText;
    std::vector<std::string> m_root;
};

} // namespace leasehold
