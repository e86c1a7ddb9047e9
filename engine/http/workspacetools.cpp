// WorkspaceTools: the catalogue, path resolution, and the guard every mutation passes.
// The tool handlers are in workspacetools_calls.cpp.

#include "workspacetools.h"

#include "fieldreader.h"
#include "jsonviews.h"
#include "mcpschema.h"

#include <QCryptographicHash>
#include <QFile>

#include <condition_variable>

namespace leasehold {

using nlohmann::json;
using namespace schema;

namespace {

const char *kProtections =
    " Nothing is changed, and the result says why, when: another agent holds the path (or a "
    "folder above it) - work on something else or lock_acquire it, which waits for them; other "
    "agents are live and you hold no lease on it - call lock_acquire first; or the file changed "
    "since you last read it, or exists and you never read it - fs_read it again and redo your "
    "change.";

json pathSchema(const char *description)
{
    return {
        {"type", "string"}, {"minLength", 1}, {"maxLength", 1024}, {"description", description}};
}

} // namespace

WorkspaceTools::WorkspaceTools(EngineHost &host, McpSessions &sessions, const QString &root,
                               Options options)
    : m_host(host)
    , m_sessions(sessions)
    , m_fs(root)
    , m_options(options)
{
    m_pool.setMaxThreadCount(4);
    m_pool.setExpiryTimeout(30'000);
}

WorkspaceTools::~WorkspaceTools()
{
    m_closing = true;
    // A worker may be waiting for an engine step: keep running those until every worker is done.
    while (!m_pool.waitForDone(5))
        drainEngineSteps();
    drainEngineSteps();
}

void WorkspaceTools::onEngine(const std::function<void()> &step)
{
    std::mutex doneMutex;
    std::condition_variable doneSignal;
    bool done = false;
    {
        std::lock_guard lock(m_stepsMutex);
        m_steps.push_back([&] {
            step();
            std::lock_guard doneLock(doneMutex);
            done = true;
            doneSignal.notify_one();
        });
    }
    QMetaObject::invokeMethod(
        &m_engineContext, [this] { drainEngineSteps(); }, Qt::QueuedConnection);
    std::unique_lock lock(doneMutex);
    doneSignal.wait(lock, [&] { return done; });
}

void WorkspaceTools::drainEngineSteps()
{
    std::deque<std::function<void()>> steps;
    {
        std::lock_guard lock(m_stepsMutex);
        steps.swap(m_steps);
    }
    for (const auto &step : steps)
        step();
}

McpTools::Handler WorkspaceTools::offThread(
    McpTools::Step (WorkspaceTools::*handler)(const json &, const std::string &))
{
    return [this, handler](const json &args, const std::string &actor) {
        McpTools::Step step;
        step.later = [this, handler, args, actor](McpTools::Done done) {
            if (m_closing)
                return done(McpTools::failure({{"ok", false},
                                               {"reason", "unavailable"},
                                               {"message", "the service is stopping"}},
                                              "The service is stopping; nothing was done."));
            m_pool.start([this, handler, args, actor, done = std::move(done)]() mutable {
                json result;
                try {
                    result = (this->*handler)(args, actor).result;
                } catch (const std::exception &e) {
                    const std::string message = std::string("internal error: ") + e.what();
                    result = McpTools::failure(
                        {{"ok", false}, {"reason", "internal"}, {"message", message}}, message);
                }
                QMetaObject::invokeMethod(
                    &m_engineContext,
                    [done = std::move(done), result = std::move(result)]() mutable {
                        done(std::move(result));
                    },
                    Qt::QueuedConnection);
            });
        };
        return step;
    };
}

void WorkspaceTools::publish(McpTools &tools)
{
    const json path =
        pathSchema("Path relative to the workspace root, taken literally (no wildcards)");
    const json fileOut = withRefusalFields({{"path", kString},
                                            {"resource", kString},
                                            {"revision", kString},
                                            {"previousRevision", kString}});
    auto bind = [this](McpTools::Step (WorkspaceTools::*handler)(
                    const json &, const std::string &)) { return offThread(handler); };
    const std::string write = kProtections;
    tools.add({"fs_read", "Read a workspace file",
               "Read a file of the shared workspace (path relative to its root). Returns its text "
               "- lines `offset` (1-based) to `offset`+`limit`-1 when given - and its `revision`. "
               "The server remembers the revision you saw: fs_write and fs_edit refuse to change "
               "a file that changed since, so read again before you edit a file others may touch. "
               "Binary files come back only with encoding \"base64\"; files above 8 MiB need "
               "offset and limit.",
               objectSchema({{"path", path},
                             {"offset", {{"type", "integer"}, {"minimum", 1}}},
                             {"limit", {{"type", "integer"}, {"minimum", 1}}},
                             {"encoding", {{"type", "string"}, {"enum", {"text", "base64"}}}}},
                            {"path"}),
               withRefusalFields({{"path", kString},
                                  {"revision", kString},
                                  {"content", kString},
                                  {"encoding", kString},
                                  {"size", kInteger},
                                  {"totalLines", kInteger}}),
               true, true, bind(&WorkspaceTools::read)});
    tools.add({"fs_stat", "Facts about a workspace path",
               "Whether a path exists, file or folder, its size, mode and modification time, and "
               "a file's revision (which counts as having seen it, like fs_read).",
               objectSchema({{"path", path}}, {"path"}),
               withRefusalFields({{"path", kString},
                                  {"exists", {{"type", "boolean"}}},
                                  {"type", kString},
                                  {"size", kInteger},
                                  {"mode", kString},
                                  {"modifiedAt", kInteger},
                                  {"revision", kString}}),
               true, true, bind(&WorkspaceTools::stat)});
    tools.add({"fs_list", "List a workspace folder",
               "List a folder (default: the workspace root) to `depth` levels (default 1, at most "
               "5): each entry's path, type and size, and for files the revision (seen, as by "
               "fs_read). At most 1000 entries; `truncated` says when there were more.",
               objectSchema({{"path", path}, {"depth", {{"type", "integer"}, {"minimum", 1}}}}),
               withRefusalFields({{"path", kString},
                                  {"entries", {{"type", "array"}, {"items", {{"type", "object"}}}}},
                                  {"truncated", {{"type", "boolean"}}}}),
               true, true, bind(&WorkspaceTools::list)});
    tools.add({"fs_write", "Write a whole workspace file",
               "Create a file or replace its whole content. The write is atomic (readers see the "
               "old or the new content, never a mix) and keeps the file's mode." +
                   write,
               objectSchema({{"path", path}, {"content", kString}}, {"path", "content"}), fileOut,
               true, false, bind(&WorkspaceTools::write)});
    tools.add({"fs_edit", "Edit text in a workspace file",
               "Replace an exact piece of text in a file: `old_string` must occur exactly once "
               "(include surrounding lines to make it unique) unless `replace_all` is true." +
                   write,
               objectSchema({{"path", path},
                             {"old_string", kString},
                             {"new_string", kString},
                             {"replace_all", {{"type", "boolean"}}}},
                            {"path", "old_string", "new_string"}),
               fileOut, true, false, bind(&WorkspaceTools::edit)});
    tools.add({"fs_mkdir", "Create a workspace folder",
               "Create a folder and any missing parents." + write,
               objectSchema({{"path", path}}, {"path"}), fileOut, true, false,
               bind(&WorkspaceTools::mkdir)});
    tools.add({"fs_move", "Move or rename in the workspace",
               "Move or rename a file or folder. Both ends count as changed: neither may be held "
               "by another agent, and with other agents live you need leases on both." +
                   write,
               objectSchema({{"from", path}, {"to", path}}, {"from", "to"}), fileOut, true, false,
               bind(&WorkspaceTools::move)});
    tools.add({"fs_delete", "Delete from the workspace",
               "Delete a file, or a folder with everything in it when `recursive` is true." + write,
               objectSchema({{"path", path}, {"recursive", {{"type", "boolean"}}}}, {"path"}),
               fileOut, true, false, bind(&WorkspaceTools::remove)});
}

std::variant<WorkspaceTools::Target, WorkspaceTools::Failure>
WorkspaceTools::target(const json &args, const char *field, bool required, bool withRevision) const
{
    auto fail = [](std::string reason, const std::string &message) {
        return McpTools::failure(
            {{"ok", false}, {"reason", std::move(reason)}, {"message", message}}, message);
    };
    FieldReader r(args);
    const std::optional<std::string> text = r.string(field, required, 1024);
    if (r.failed())
        return fail("invalid", r.error());
    // A tool's path names one file or folder, taken literally: `src/a*b.cpp` is the file of
    // that name, never a pattern (a lease on a pattern covers it like any other match).
    ParsedName parsed = m_host.parser().parseFilePath(text.value_or("."));
    if (const auto *bad = std::get_if<NameError>(&parsed))
        return fail("escapes_root", std::string(field) + " " + bad->message);
    const ResourceName &lexical = std::get<ResourceName>(parsed);
    if (!lexical.isWorkspacePath())
        return fail("invalid",
                    std::string(field) + " must be a workspace path, not " + lexical.canonical());
    auto resolved = m_fs.resolve(lexical.path());
    if (const auto *error = std::get_if<FsError>(&resolved))
        return fail(error->code, error->message);
    WorkspaceFs::Resolved where = std::get<WorkspaceFs::Resolved>(std::move(resolved));
    ParsedName physical =
        m_host.parser().parseFilePath(where.entry.path.empty() ? "." : where.entry.path);
    if (!std::holds_alternative<ResourceName>(physical))
        return fail("escapes_root", std::string(field) + " does not lie inside the workspace");
    Target t{std::get<ResourceName>(physical), std::move(where), {}};
    if (withRevision)
        t.revision = revisionOf(t.where);
    return t;
}

std::string WorkspaceTools::revisionOf(const WorkspaceFs::Resolved &where) const
{
    if (where.entry.kind != FsEntry::Kind::File)
        return {};
    QFile file(where.absolute);
    QCryptographicHash hash(QCryptographicHash::Sha256);
    if (!file.open(QIODevice::ReadOnly) || !hash.addData(&file))
        return "sha256-v1:unreadable";
    return "sha256-v1:" + hash.result().toHex().toStdString();
}

void WorkspaceTools::observe(const std::string &actor, const Target &t)
{
    if (t.where.entry.kind != FsEntry::Kind::Directory)
        m_fence.observe(actor, t.where.entry.path, t.revision);
}

std::optional<WorkspaceTools::Failure>
WorkspaceTools::guard(const std::string &actor, const std::vector<const Target *> &targets,
                      const std::vector<bool> &fenced, const char *tool)
{
    std::optional<Failure> refusal;
    onEngine([&] { refusal = check(actor, targets, fenced, tool); });
    return refusal;
}

std::optional<WorkspaceTools::Failure>
WorkspaceTools::check(const std::string &actor, const std::vector<const Target *> &targets,
                      const std::vector<bool> &fenced, const char *tool) const
{
    for (const Target *t : targets) {
        const std::optional<Refusal> held =
            m_host.engine().changeRefusal(actor, t->name, Mode::Write);
        if (!held)
            continue;
        const Refusal &r = *held;
        const NextSteps steps = mcpSteps(true);
        const std::string sentence = "Your " + std::string(tool) +
                                     " changed nothing: " + refusalSentence(r, steps).toStdString();
        json body = toJson(r, steps);
        body["message"] = sentence;
        return McpTools::failure(std::move(body), sentence);
    }
    if (strict(m_sessions.liveAgents())) {
        json unlocked = json::array();
        for (const Target *t : targets)
            if (!m_host.engine().coveringLease(actor, t->name))
                unlocked.push_back(t->where.entry.path.empty() ? "." : t->where.entry.path);
        if (!unlocked.empty()) {
            const std::string sentence =
                "another agent is live; lock_acquire first: call lock_acquire with paths " +
                unlocked.dump() + ", then repeat this " + tool + " (it changed nothing).";
            return McpTools::failure({{"ok", false},
                                      {"reason", "lock_required"},
                                      {"message", sentence},
                                      {"paths", unlocked}},
                                     sentence);
        }
    }
    for (std::size_t i = 0; i < targets.size(); ++i) {
        const Target *t = targets[i];
        if (!fenced[i] || t->where.entry.kind == FsEntry::Kind::Directory)
            continue;
        const std::string problem = m_fence.check(actor, t->where.entry.path, t->revision);
        if (!problem.empty())
            return McpTools::failure({{"ok", false},
                                      {"reason", "stale_write"},
                                      {"message", problem + " (your " + tool + " changed nothing)"},
                                      {"path", t->where.entry.path},
                                      {"revision", t->revision}},
                                     problem + " (your " + tool + " changed nothing).");
    }
    return std::nullopt;
}

std::optional<FsError> WorkspaceTools::land(const std::string &actor,
                                            const std::vector<const Target *> &targets,
                                            const char *tool, const Change &what,
                                            const std::function<std::optional<FsError>()> &change)
{
    std::vector<std::string> pins;
    std::string leaseId;
    onEngine([&] {
        for (const Target *t : targets) {
            const std::optional<LeaseInfo> cover = m_host.engine().coveringLease(actor, t->name);
            if (!cover)
                continue;
            leaseId = cover->leaseId;
            const PinResult pinned =
                m_host.run([&](LeaseEngine &e) { return e.pin(actor, leaseId); });
            if (const auto *pin = std::get_if<PinInfo>(&pinned))
                pins.push_back(pin->pinId);
        }
        if (m_beforeChange)
            m_beforeChange();
    });
    if (m_duringChange)
        m_duringChange();
    std::optional<FsError> error = change(); // the file work, on this worker
    onEngine([&] {
        if (!error)
            m_host.run([&](LeaseEngine &e) {
                e.recordMutation(actor, targets.front()->name, leaseId, tool, what.before,
                                 what.after, what.to);
            });
        for (const std::string &pinId : pins)
            m_host.run([&](LeaseEngine &e) { e.unpin(actor, pinId); });
    });
    return error;
}

} // namespace leasehold
