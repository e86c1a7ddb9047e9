#include "workspacefs.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>

#include <climits>
#include <cstdlib>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace leasehold {

namespace {

FsError ioError(const std::string &what, const std::string &path)
{
    return {"io_error", what + " " + path + " failed: " + std::strerror(errno)};
}

std::string displayName(const std::string &path)
{
    return path.empty() ? std::string("the workspace root") : path;
}

// fsync on a folder makes a rename in it durable.
void syncDirectory(const QByteArray &dir)
{
    const int fd = ::open(dir.constData(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        ::fsync(fd);
        ::close(fd);
    }
}

} // namespace

WorkspaceFs::WorkspaceFs(const QString &root)
    : m_root(QFileInfo(root).canonicalFilePath())
{}

bool WorkspaceFs::inside(const QString &absolute) const
{
    return absolute == m_root || absolute.startsWith(m_root + QLatin1Char('/'));
}

std::string WorkspaceFs::relative(const QString &absolute) const
{
    return absolute == m_root ? std::string() : absolute.mid(m_root.size() + 1).toStdString();
}

FsEntry WorkspaceFs::describe(const QString &absolute) const
{
    FsEntry e;
    e.path = relative(absolute);
    struct stat st;
    if (::stat(QFile::encodeName(absolute).constData(), &st) != 0)
        return e;
    e.kind = S_ISDIR(st.st_mode) ? FsEntry::Kind::Directory : FsEntry::Kind::File;
    e.size = S_ISREG(st.st_mode) ? std::int64_t(st.st_size) : 0;
    e.mode = int(st.st_mode & 07777);
    e.modifiedAt = TimeMs(st.st_mtim.tv_sec) * 1000 + st.st_mtim.tv_nsec / 1'000'000;
    return e;
}

std::variant<WorkspaceFs::Resolved, FsError>
WorkspaceFs::resolve(const std::vector<std::string> &segments) const
{
    QString current = m_root;
    bool missing = false;
    std::string walked;
    for (std::size_t i = 0; i < segments.size(); ++i) {
        walked += (walked.empty() ? "" : "/") + segments[i];
        const QString next = current + QLatin1Char('/') + QString::fromStdString(segments[i]);
        if (missing) {
            current = next;
            continue;
        }
        const QByteArray native = QFile::encodeName(next);
        struct stat st;
        if (::lstat(native.constData(), &st) != 0) {
            missing = true; // the rest of the path does not exist yet
            current = next;
            continue;
        }
        if (S_ISLNK(st.st_mode)) {
            char target[PATH_MAX];
            if (!::realpath(native.constData(), target))
                return FsError{"escapes_root", walked + " is a symbolic link that leads nowhere "
                                                        "(missing target or a loop)"};
            current = QFile::decodeName(target);
            if (!inside(current))
                return FsError{"escapes_root",
                               walked + " is a symbolic link that leads outside the workspace"};
        } else {
            current = next;
        }
        if (i + 1 < segments.size() && !QFileInfo(current).isDir())
            return FsError{"not_directory", walked + " is not a folder"};
    }
    Resolved out{current, describe(current)};
    struct stat st;
    if (!missing && ::stat(QFile::encodeName(current).constData(), &st) == 0 &&
        !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
        return FsError{"special_file", displayName(out.entry.path) +
                                           " is not a regular file or folder (device, pipe "
                                           "or socket); it is left alone"};
    return out;
}

std::string WorkspaceFs::revisionOf(const QByteArray &content)
{
    return "sha256-v1:" +
           QCryptographicHash::hash(content, QCryptographicHash::Sha256).toHex().toStdString();
}

std::variant<QByteArray, FsError> WorkspaceFs::read(const Resolved &file,
                                                    std::int64_t maxBytes) const
{
    if (file.entry.kind == FsEntry::Kind::Missing)
        return FsError{"not_found", file.entry.path + " does not exist"};
    if (file.entry.kind == FsEntry::Kind::Directory)
        return FsError{"is_directory", displayName(file.entry.path) + " is a folder; use fs_list"};
    if (file.entry.size > maxBytes)
        return FsError{"too_large", file.entry.path + " has " + std::to_string(file.entry.size) +
                                        " bytes, more than the " + std::to_string(maxBytes) +
                                        " a read returns"};
    QFile f(file.absolute);
    if (!f.open(QIODevice::ReadOnly))
        return ioError("reading", file.entry.path);
    return f.readAll();
}

std::optional<FsError> WorkspaceFs::write(const Resolved &file, const QByteArray &content) const
{
    if (file.entry.kind == FsEntry::Kind::Directory)
        return FsError{"is_directory", displayName(file.entry.path) + " is a folder"};
    const QFileInfo info(file.absolute);
    const QByteArray dir = QFile::encodeName(info.absolutePath());
    // Missing folders on the way are created: the path was resolved inside the root.
    if (!QDir().mkpath(info.absolutePath()))
        return ioError("creating the folder of", file.entry.path);
    const int mode = file.entry.kind == FsEntry::Kind::File ? file.entry.mode : 0644;
    QByteArray temp = dir + "/." + QFile::encodeName(info.fileName()) + ".leasehold-XXXXXX";
    const int fd = ::mkstemp(temp.data());
    if (fd < 0)
        return ioError("creating a temporary file for", file.entry.path);
    qsizetype done = 0;
    bool ok = true;
    while (ok && done < content.size()) {
        const ssize_t n =
            ::write(fd, content.constData() + done, std::size_t(content.size() - done));
        if (n < 0 && errno == EINTR)
            continue;
        ok = n > 0;
        done += ok ? n : 0;
    }
    ok = ok && ::fsync(fd) == 0 && ::fchmod(fd, mode_t(mode)) == 0;
    FsError error = ok ? FsError{} : ioError("writing", file.entry.path);
    ::close(fd);
    if (ok && ::rename(temp.constData(), QFile::encodeName(file.absolute).constData()) != 0) {
        ok = false;
        error = ioError("replacing", file.entry.path);
    }
    if (!ok) {
        ::unlink(temp.constData());
        return error;
    }
    syncDirectory(dir);
    return std::nullopt;
}

std::optional<FsError> WorkspaceFs::makeDirectory(const Resolved &dir) const
{
    if (dir.entry.kind == FsEntry::Kind::File)
        return FsError{"exists", dir.entry.path + " exists and is a file"};
    if (!QDir().mkpath(dir.absolute))
        return ioError("creating the folder", dir.entry.path);
    return std::nullopt;
}

std::optional<FsError> WorkspaceFs::move(const Resolved &from, const Resolved &to) const
{
    if (from.entry.kind == FsEntry::Kind::Missing)
        return FsError{"not_found", from.entry.path + " does not exist"};
    if (from.entry.path.empty())
        return FsError{"invalid", "the workspace root cannot be moved"};
    if (to.absolute.startsWith(from.absolute + QLatin1Char('/')))
        return FsError{"invalid", "cannot move " + from.entry.path + " into itself"};
    if (to.entry.kind == FsEntry::Kind::Directory)
        return FsError{"exists", to.entry.path + " is an existing folder"};
    if (!QFileInfo(QFileInfo(to.absolute).absolutePath()).isDir())
        return FsError{"not_found",
                       "the folder of " + to.entry.path + " does not exist; create it first"};
    if (::rename(QFile::encodeName(from.absolute).constData(),
                 QFile::encodeName(to.absolute).constData()) != 0)
        return ioError("moving", from.entry.path);
    syncDirectory(QFile::encodeName(QFileInfo(to.absolute).absolutePath()));
    return std::nullopt;
}

std::optional<FsError> WorkspaceFs::remove(const Resolved &target, bool recursive) const
{
    switch (target.entry.kind) {
    case FsEntry::Kind::Missing:
        return FsError{"not_found", target.entry.path + " does not exist"};
    case FsEntry::Kind::File:
        if (::unlink(QFile::encodeName(target.absolute).constData()) != 0)
            return ioError("deleting", target.entry.path);
        return std::nullopt;
    case FsEntry::Kind::Directory:
        if (target.entry.path.empty())
            return FsError{"invalid", "the workspace root cannot be deleted"};
        if (!recursive && !QDir(target.absolute).isEmpty())
            return FsError{"not_empty", target.entry.path +
                                            " is a folder with content; pass recursive: true "
                                            "to delete it and everything in it"};
        if (!QDir(target.absolute).removeRecursively())
            return ioError("deleting the folder", target.entry.path);
        return std::nullopt;
    }
    return std::nullopt;
}

std::vector<FsEntry> WorkspaceFs::list(const Resolved &dir, int depth, std::size_t maxEntries,
                                       bool *truncated) const
{
    std::vector<FsEntry> out;
    *truncated = false;
    // Breadth by folder, never deeper than asked: a listing costs what it returns.
    std::function<void(const QString &, int)> walk = [&](const QString &folder, int level) {
        const QFileInfoList children = QDir(folder).entryInfoList(
            QDir::AllEntries | QDir::Hidden | QDir::System | QDir::NoDotAndDotDot, QDir::Name);
        for (const QFileInfo &info : children) {
            if (*truncated)
                return;
            // Links count only when they resolve inside the workspace; special files never.
            if (info.isSymLink() && !inside(info.canonicalFilePath()))
                continue;
            if (!info.isFile() && !info.isDir())
                continue;
            if (out.size() == maxEntries) {
                *truncated = true;
                return;
            }
            out.push_back(describe(info.absoluteFilePath()));
            if (level < depth && info.isDir() && !info.isSymLink())
                walk(info.absoluteFilePath(), level + 1);
        }
    };
    walk(dir.absolute, 1);
    std::sort(out.begin(), out.end(),
              [](const FsEntry &a, const FsEntry &b) { return a.path < b.path; });
    return out;
}

} // namespace leasehold
