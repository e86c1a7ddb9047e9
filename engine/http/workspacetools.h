#pragma once

#include "mcptools.h"
#include "revisionfence.h"
#include "workspacefs.h"

#include <QThreadPool>

#include <nlohmann/json.hpp>

#include <atomic>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace leasehold {

// The guarded workspace tools (docs/operating.md, "Several coding agents"): fs_read, fs_stat,
// fs_list, fs_write, fs_edit, fs_mkdir, fs_move, fs_delete over one workspace root, published
// through McpTools.
//
// Every path goes through the same resource parser as lock_acquire and is then resolved to
// where it really lies (WorkspaceFs), so `src/app.cpp` locked and `./src//app.cpp` written are
// one resource, and a link cannot alias a held path. A mutation is refused, before any side
// effect, when: another agent holds the path (or a folder above it, or something below it);
// more than one agent is live and the caller holds no write lease covering it (strict mode);
// or the target is not as the caller last observed it (the revision fence). Otherwise the
// covering lease is pinned while the change lands, the change is made atomically, the caller's
// remembered revision advances, and the ledger records who changed what, before and after.
//
// Threads: the file work (resolving paths, hashing, reading, writing, fsync, renames) runs on a
// small pool of worker threads, so a slow disk never stalls the engine thread that serves every
// agent. Each step that touches the engine - the guard, pinning, recording the mutation,
// unpinning - is handed to the engine thread and waited for; the change itself lands while its
// covering lease is pinned. Results are delivered on the engine thread.
class WorkspaceTools
{
public:
    struct Options
    {
        std::int64_t maxReadBytes = 8 * 1024 * 1024;
        std::size_t maxListEntries = 1000;
    };

    WorkspaceTools(EngineHost &host, McpSessions &sessions, const QString &root, Options options);
    // Waits for calls in flight (their engine steps still run); later calls are refused.
    ~WorkspaceTools();

    // Strict mode: with more than one agent live, a change needs a covering write lease.
    static bool strict(int liveAgents) { return liveAgents > 1; }
    WorkspaceTools(EngineHost &host, McpSessions &sessions, const QString &root)
        : WorkspaceTools(host, sessions, root, Options())
    {}

    // Adds the fs_* tools to `tools`.
    void publish(McpTools &tools);

    // Runs between the checks and the change of every mutation, with its pins held: lets a test
    // make time pass (and leases fall due) while a write is landing.
    void setBeforeChange(std::function<void()> hook) { m_beforeChange = std::move(hook); }
    // Runs on the worker thread right before the change, with pins held: lets a test stall a
    // write the way a slow disk would.
    void setDuringChange(std::function<void()> hook) { m_duringChange = std::move(hook); }

    const WorkspaceFs &fs() const { return m_fs; }

private:
    // A path argument, parsed and resolved, with its content revision (files only; skipped when
    // the caller reads the content anyway and hashes what it read).
    struct Target
    {
        ResourceName name; // the physical path as a resource
        WorkspaceFs::Resolved where;
        std::string revision; // empty: missing, or a folder
    };
    using Failure = nlohmann::json; // a tool result with isError
    std::variant<Target, Failure> target(const nlohmann::json &args, const char *field,
                                         bool required = true, bool withRevision = true) const;
    std::string revisionOf(const WorkspaceFs::Resolved &where) const;
    // Lease, strict-mode and fence checks for a mutation of `targets` (fence only where
    // `fenced`), run on the engine thread; the refusal to answer, or nothing when it may go on.
    std::optional<Failure> guard(const std::string &actor,
                                 const std::vector<const Target *> &targets,
                                 const std::vector<bool> &fenced, const char *tool);
    std::optional<Failure> check(const std::string &actor,
                                 const std::vector<const Target *> &targets,
                                 const std::vector<bool> &fenced, const char *tool) const;
    // What a change did, as the ledger records it: revisions before and after ("" absent),
    // and a move's destination.
    struct Change
    {
        std::string before;
        std::string after;
        std::string to;
    };
    // Pins the covering leases, runs `change`, unpins, and on success records the mutation.
    std::optional<FsError> land(const std::string &actor,
                                const std::vector<const Target *> &targets, const char *tool,
                                const Change &what,
                                const std::function<std::optional<FsError>()> &change);
    void observe(const std::string &actor, const Target &t);
    // Runs `step` on the engine thread and returns once it has run (worker threads only).
    void onEngine(const std::function<void()> &step);
    // Runs what the engine thread was handed.
    void drainEngineSteps();
    // A handler as a tool: it runs on a worker, its result comes back on the engine thread.
    McpTools::Handler offThread(McpTools::Step (WorkspaceTools::*handler)(const nlohmann::json &,
                                                                          const std::string &));

    McpTools::Step read(const nlohmann::json &args, const std::string &actor);
    McpTools::Step stat(const nlohmann::json &args, const std::string &actor);
    McpTools::Step list(const nlohmann::json &args, const std::string &actor);
    McpTools::Step write(const nlohmann::json &args, const std::string &actor);
    McpTools::Step edit(const nlohmann::json &args, const std::string &actor);
    McpTools::Step mkdir(const nlohmann::json &args, const std::string &actor);
    McpTools::Step move(const nlohmann::json &args, const std::string &actor);
    McpTools::Step remove(const nlohmann::json &args, const std::string &actor);
    // Writes `content` to `t` after the guard; the shared tail of fs_write and fs_edit.
    McpTools::Step replaceContent(const std::string &actor, const Target &t,
                                  const QByteArray &content, const char *tool);

    EngineHost &m_host;
    McpSessions &m_sessions;
    WorkspaceFs m_fs;
    Options m_options;
    RevisionFence m_fence;
    std::function<void()> m_beforeChange;
    std::function<void()> m_duringChange;

    QObject m_engineContext; // lives on the engine thread; steps and results are queued to it
    std::mutex m_stepsMutex;
    std::deque<std::function<void()>> m_steps;
    std::atomic<bool> m_closing{false};
    QThreadPool m_pool;
};

} // namespace leasehold
