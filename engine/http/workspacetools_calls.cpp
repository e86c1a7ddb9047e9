// WorkspaceTools: the fs_* tool handlers.

#include "fieldreader.h"
#include "workspacetools.h"

#include <QByteArrayView>

namespace leasehold {

using nlohmann::json;

namespace {

constexpr std::int64_t kMaxWindowedReadBytes = 64 * 1024 * 1024;

json failure(const std::string &reason, const std::string &message)
{
    return McpTools::failure({{"ok", false}, {"reason", reason}, {"message", message}}, message);
}

json fsFailure(const FsError &error)
{
    return failure(error.code, error.message);
}

const char *kindName(FsEntry::Kind kind)
{
    switch (kind) {
    case FsEntry::Kind::File:
        return "file";
    case FsEntry::Kind::Directory:
        return "directory";
    case FsEntry::Kind::Missing:
        break;
    }
    return "missing";
}

bool isText(const QByteArray &content)
{
    return !content.contains('\0') && QByteArrayView(content).isValidUtf8();
}

std::string displayPath(const std::string &path)
{
    return path.empty() ? "." : path;
}

} // namespace

McpTools::Step WorkspaceTools::read(const json &args, const std::string &actor)
{
    auto t = target(args, "path", true, false); // the revision is of the bytes read below
    if (auto *f = std::get_if<Failure>(&t))
        return *f;
    const Target &file = std::get<Target>(t);
    FieldReader r(args);
    const auto offset = r.integer("offset", false, 1, std::int64_t(1) << 40);
    const auto limit = r.integer("limit", false, 1, std::int64_t(1) << 40);
    const auto encoding = r.string("encoding", false, 16);
    if (!r.failed() && encoding && *encoding != "text" && *encoding != "base64")
        r.fail("encoding must be text or base64");
    if (r.failed())
        return failure("invalid", r.error());
    const bool windowed = offset || limit;
    const std::int64_t cap = windowed && encoding.value_or("text") == "text"
                                 ? kMaxWindowedReadBytes
                                 : m_options.maxReadBytes;
    if (file.where.entry.kind == FsEntry::Kind::File && file.where.entry.size > cap)
        return failure("too_large", file.where.entry.path + " has " +
                                        std::to_string(file.where.entry.size) +
                                        " bytes; read it in parts with offset and limit (lines)");
    auto content = m_fs.read(file.where, cap);
    if (auto *error = std::get_if<FsError>(&content)) {
        if (error->code == "not_found")
            observe(actor, file); // seen absent: creating it later is not a blind overwrite
        return fsFailure(*error);
    }
    const QByteArray &bytes = std::get<QByteArray>(content);
    const std::string revision = WorkspaceFs::revisionOf(bytes);
    json body = {{"ok", true},
                 {"path", file.where.entry.path},
                 {"revision", revision},
                 {"size", bytes.size()}};
    if (encoding.value_or("text") == "base64") {
        body["encoding"] = "base64";
        body["content"] = bytes.toBase64().toStdString();
    } else {
        if (!isText(bytes))
            return failure("binary", file.where.entry.path +
                                         " is not UTF-8 text; pass encoding \"base64\" to get its "
                                         "bytes");
        const QList<QByteArray> lines = bytes.split('\n');
        const std::int64_t first = offset.value_or(1);
        const std::int64_t count = limit.value_or(std::int64_t(lines.size()));
        QByteArray window;
        for (std::int64_t i = first - 1; i < std::int64_t(lines.size()) && i < first - 1 + count;
             ++i)
            window += lines[qsizetype(i)] + (i + 1 < std::int64_t(lines.size()) ? "\n" : "");
        body["encoding"] = "text";
        body["content"] = window.toStdString();
        body["totalLines"] = lines.size();
        if (windowed)
            body["offset"] = first;
    }
    m_fence.observe(actor, file.where.entry.path, revision);
    return McpTools::result(std::move(body));
}

McpTools::Step WorkspaceTools::stat(const json &args, const std::string &actor)
{
    auto t = target(args, "path");
    if (auto *f = std::get_if<Failure>(&t))
        return *f;
    const Target &target = std::get<Target>(t);
    const FsEntry &e = target.where.entry;
    json body = {{"ok", true},
                 {"path", displayPath(e.path)},
                 {"exists", e.kind != FsEntry::Kind::Missing},
                 {"type", kindName(e.kind)}};
    if (e.kind != FsEntry::Kind::Missing) {
        char mode[8];
        std::snprintf(mode, sizeof mode, "%04o", e.mode);
        body["size"] = e.size;
        body["mode"] = mode;
        body["modifiedAt"] = e.modifiedAt;
    }
    if (!target.revision.empty())
        body["revision"] = target.revision;
    observe(actor, target);
    return McpTools::result(std::move(body));
}

McpTools::Step WorkspaceTools::list(const json &args, const std::string &actor)
{
    auto t = target(args, "path", false);
    if (auto *f = std::get_if<Failure>(&t))
        return *f;
    const Target &dir = std::get<Target>(t);
    FieldReader r(args);
    const auto depth = r.integer("depth", false, 1, 5);
    if (r.failed())
        return failure("invalid", r.error());
    if (dir.where.entry.kind != FsEntry::Kind::Directory)
        return failure(dir.where.entry.kind == FsEntry::Kind::Missing ? "not_found"
                                                                      : "not_directory",
                       displayPath(dir.where.entry.path) + " is not a folder");
    bool truncated = false;
    json entries = json::array();
    for (const FsEntry &e :
         m_fs.list(dir.where, int(depth.value_or(1)), m_options.maxListEntries, &truncated)) {
        json entry = {{"path", e.path}, {"type", kindName(e.kind)}, {"size", e.size}};
        if (e.kind == FsEntry::Kind::File && e.size <= m_options.maxReadBytes) {
            const std::string revision =
                revisionOf({m_fs.root() + QLatin1Char('/') + QString::fromStdString(e.path), e});
            entry["revision"] = revision;
            m_fence.observe(actor, e.path, revision);
        }
        entries.push_back(std::move(entry));
    }
    return McpTools::result({{"ok", true},
                             {"path", displayPath(dir.where.entry.path)},
                             {"entries", std::move(entries)},
                             {"truncated", truncated}});
}

McpTools::Step WorkspaceTools::replaceContent(const std::string &actor, const Target &t,
                                              const QByteArray &content, const char *tool)
{
    if (auto refused = guard(actor, {&t}, {true}, tool))
        return *refused;
    const std::string after = WorkspaceFs::revisionOf(content);
    const std::string before = t.revision.empty() ? "absent" : t.revision;
    if (auto error = land(actor, {&t}, tool, {t.revision, after, {}},
                          [&] { return m_fs.write(t.where, content); })) {
        m_fence.forget(actor, t.where.entry.path);
        return fsFailure(*error);
    }
    m_fence.observe(actor, t.where.entry.path, after);
    json body = {{"ok", true},
                 {"path", t.where.entry.path},
                 {"resource", t.name.canonical()},
                 {"revision", after}};
    if (!t.revision.empty())
        body["previousRevision"] = t.revision;
    return McpTools::result(std::move(body));
}

McpTools::Step WorkspaceTools::write(const json &args, const std::string &actor)
{
    auto t = target(args, "path");
    if (auto *f = std::get_if<Failure>(&t))
        return *f;
    FieldReader r(args);
    const auto content = r.string("content", true, std::size_t(m_options.maxReadBytes));
    if (r.failed())
        return failure("invalid", r.error());
    return replaceContent(actor, std::get<Target>(t), QByteArray::fromStdString(*content),
                          "fs_write");
}

McpTools::Step WorkspaceTools::edit(const json &args, const std::string &actor)
{
    auto t = target(args, "path");
    if (auto *f = std::get_if<Failure>(&t))
        return *f;
    const Target &file = std::get<Target>(t);
    FieldReader r(args);
    const auto oldText = r.string("old_string", true, std::size_t(m_options.maxReadBytes));
    const auto newText = r.string("new_string", true, std::size_t(m_options.maxReadBytes));
    const auto all = r.boolean("replace_all", false);
    if (!r.failed() && oldText->empty())
        r.fail("old_string must not be empty; use fs_write to replace a whole file");
    if (r.failed())
        return failure("invalid", r.error());
    if (auto refused = guard(actor, {&file}, {true}, "fs_edit"))
        return *refused;
    auto content = m_fs.read(file.where, m_options.maxReadBytes);
    if (auto *error = std::get_if<FsError>(&content))
        return fsFailure(*error);
    QByteArray bytes = std::get<QByteArray>(std::move(content));
    if (!isText(bytes))
        return failure("binary", file.where.entry.path + " is not UTF-8 text; fs_edit changes "
                                                         "text only");
    const QByteArray from = QByteArray::fromStdString(*oldText);
    const qsizetype found = bytes.count(from);
    if (found == 0)
        return failure("no_match", "old_string does not occur in " + file.where.entry.path +
                                       "; fs_read it and copy the text exactly (fs_edit changed "
                                       "nothing)");
    if (found > 1 && !all.value_or(false))
        return failure("ambiguous", "old_string occurs " + std::to_string(found) + " times in " +
                                        file.where.entry.path +
                                        "; include more surrounding text to make it unique, or "
                                        "pass replace_all: true (fs_edit changed nothing)");
    bytes.replace(from, QByteArray::fromStdString(*newText));
    return replaceContent(actor, file, bytes, "fs_edit");
}

McpTools::Step WorkspaceTools::mkdir(const json &args, const std::string &actor)
{
    auto t = target(args, "path");
    if (auto *f = std::get_if<Failure>(&t))
        return *f;
    const Target &dir = std::get<Target>(t);
    if (dir.where.entry.kind == FsEntry::Kind::Directory)
        return McpTools::result(
            {{"ok", true}, {"path", displayPath(dir.where.entry.path)}, {"created", false}});
    if (auto refused = guard(actor, {&dir}, {false}, "fs_mkdir"))
        return *refused;
    if (auto error = land(actor, {&dir}, "fs_mkdir", {{}, "directory", {}},
                          [&] { return m_fs.makeDirectory(dir.where); }))
        return fsFailure(*error);
    return McpTools::result({{"ok", true},
                             {"path", dir.where.entry.path},
                             {"resource", dir.name.canonical()},
                             {"created", true}});
}

McpTools::Step WorkspaceTools::move(const json &args, const std::string &actor)
{
    auto from = target(args, "from");
    if (auto *f = std::get_if<Failure>(&from))
        return *f;
    auto to = target(args, "to");
    if (auto *f = std::get_if<Failure>(&to))
        return *f;
    const Target &a = std::get<Target>(from);
    const Target &b = std::get<Target>(to);
    if (auto refused = guard(actor, {&a, &b}, {true, true}, "fs_move"))
        return *refused;
    const std::string revision =
        a.revision.empty() ? std::string(kindName(a.where.entry.kind)) : a.revision;
    if (auto error = land(actor, {&a, &b}, "fs_move", {revision, revision, b.where.entry.path},
                          [&] { return m_fs.move(a.where, b.where); }))
        return fsFailure(*error);
    m_fence.observe(actor, a.where.entry.path, {});
    if (!a.revision.empty())
        m_fence.observe(actor, b.where.entry.path, a.revision);
    return McpTools::result({{"ok", true},
                             {"path", b.where.entry.path},
                             {"resource", b.name.canonical()},
                             {"from", a.where.entry.path},
                             {"revision", a.revision}});
}

McpTools::Step WorkspaceTools::remove(const json &args, const std::string &actor)
{
    auto t = target(args, "path");
    if (auto *f = std::get_if<Failure>(&t))
        return *f;
    const Target &victim = std::get<Target>(t);
    FieldReader r(args);
    const auto recursive = r.boolean("recursive", false);
    if (r.failed())
        return failure("invalid", r.error());
    if (victim.where.entry.kind == FsEntry::Kind::Missing)
        return failure("not_found", victim.where.entry.path + " does not exist");
    if (auto refused = guard(actor, {&victim}, {true}, "fs_delete"))
        return *refused;
    const std::string before = victim.revision.empty() ? "directory" : victim.revision;
    if (auto error = land(actor, {&victim}, "fs_delete", {before, {}, {}},
                          [&] { return m_fs.remove(victim.where, recursive.value_or(false)); }))
        return fsFailure(*error);
    m_fence.observe(actor, victim.where.entry.path, {});
    return McpTools::result({{"ok", true},
                             {"path", victim.where.entry.path},
                             {"resource", victim.name.canonical()},
                             {"previousRevision", before}});
}

} // namespace leasehold
