#pragma once

#include "clock.h"

#include <QByteArray>
#include <QString>

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace leasehold {

// Why a file operation did not happen: a stable code and one sentence for the caller.
struct FsError
{
    std::string code; // escapes_root, not_found, special_file, not_directory, is_directory, ...
    std::string message;
};

struct FsEntry
{
    enum class Kind { Missing, File, Directory };
    std::string path; // relative to the root, '/'-separated; "" is the root itself
    Kind kind = Kind::Missing;
    std::int64_t size = 0;
    int mode = 0; // permission bits
    TimeMs modifiedAt = 0;
};

// The files of one workspace, reached only through paths that really lie inside its root.
//
// Every path is resolved component by component: a symbolic link is followed only when its
// target, fully resolved, is still inside the root, so neither `..`, an absolute path nor a
// link (or a link loop) reaches anything outside; sockets, devices and pipes are refused. The
// resolved, physical path is what callers lock and fence, so a link cannot alias a path that
// another agent holds under its real name.
//
// Writes are atomic: a temporary file in the same folder, written, fsync'ed, given the old
// file's mode, then renamed over the target (and the folder fsync'ed); a crash leaves either
// the old content or the new, never a mix.
//
// Thread: any, one call at a time per instance.
class WorkspaceFs
{
public:
    struct Resolved
    {
        QString absolute;
        FsEntry entry; // entry.path is the physical path relative to the root
    };

    // `root` must be an existing directory; it is canonicalised.
    explicit WorkspaceFs(const QString &root);
    const QString &root() const { return m_root; }

    // `segments`: a lexically normalised relative path (as the resource parser produces it).
    std::variant<Resolved, FsError> resolve(const std::vector<std::string> &segments) const;

    // "sha256-v1:<hex>" of `content`.
    static std::string revisionOf(const QByteArray &content);

    std::variant<QByteArray, FsError> read(const Resolved &file, std::int64_t maxBytes) const;
    std::optional<FsError> write(const Resolved &file, const QByteArray &content) const;
    std::optional<FsError> makeDirectory(const Resolved &dir) const;
    std::optional<FsError> move(const Resolved &from, const Resolved &to) const;
    std::optional<FsError> remove(const Resolved &target, bool recursive) const;
    // Entries below `dir` to `depth` levels (1: its children), sorted by path, at most
    // `maxEntries` (sets `truncated`).
    std::vector<FsEntry> list(const Resolved &dir, int depth, std::size_t maxEntries,
                              bool *truncated) const;

private:
    bool inside(const QString &absolute) const;
    std::string relative(const QString &absolute) const;
    FsEntry describe(const QString &absolute) const;

    QString m_root;
};

} // namespace leasehold
