#pragma once

#include "enginehost.h"
#include "mcpsessions.h"
#include "refusals.h"

#include <nlohmann/json.hpp>

#include <functional>
#include <string>
#include <vector>

namespace leasehold {

// The next steps a refused model takes, in the words of the tools it has: lock_* or the
// coordination_* tools (refusals.h words the rest).
NextSteps mcpSteps(bool lockTools);

// The lease tools an MCP client sees: lock_acquire / lock_release / lock_status (seconds,
// paths, written for models editing a checkout) and the coordination_* tools (the REST surface
// in MCP form). Each has a description that teaches a model when to call it and what a refusal
// means, an input and an output schema, and answers with structuredContent plus the same JSON
// as text; a refusal is a result with isError whose first text is a sentence to act on.
//
// Thread: the engine thread.
class McpTools
{
public:
    using Done = std::function<void(nlohmann::json result)>;

    McpTools(EngineHost &host, McpSessions &sessions, bool open);

    // The tools/list result. `modern` (2026-07-28): parameters a gateway may route on are
    // marked `x-mcp-header` (the client mirrors them into Mcp-Param-* headers).
    nlohmann::json list(bool modern = false) const;
    // The parameters of tool `name` (published) mirrored into headers: property -> header name
    // (the part after Mcp-Param-).
    const std::vector<std::pair<std::string, std::string>> &
    headerParams(const std::string &name) const;
    // The published name for `name` (the seed's dotted names are aliases), or empty if unknown.
    std::string resolve(const std::string &name) const;
    // Runs tool `name` (published) for `session`. Answers through `done`, now or when a parked
    // wait ends; in the second case returns the engine's wait id (else 0), through which the
    // caller cancels it (EngineHost::cancelWait / abandonWait; the call then takes nothing).
    std::uint64_t call(const std::string &name, const nlohmann::json &arguments,
                       McpSession &session, Done done) const;

    // What a tool handler gives back: a result now, or a parked wait and how to answer its end.
    struct Step
    {
        Step() = default;
        Step(nlohmann::json answer) // NOLINT(google-explicit-constructor): a result now
            : result(std::move(answer))
        {}
        nlohmann::json result;
        std::uint64_t waitId = 0;
        std::function<nlohmann::json(const WaitOutcome &)> finish;
        // Work done elsewhere (the workspace tools' file I/O on their workers): called once with
        // `done`, which it calls later on the engine thread with the result.
        std::function<void(Done done)> later;
    };
    using Handler = std::function<Step(const nlohmann::json &args, const std::string &actor)>;
    struct Tool
    {
        std::string name;
        std::string title;
        std::string description;
        nlohmann::json inputSchema;
        nlohmann::json outputSchema;
        bool needsActor = true;
        bool readOnly = false;
        Handler handler;
        std::vector<std::pair<std::string, std::string>> headerParams = {}; // see headerParams()
    };

    // Publishes one more tool (the workspace tools add theirs).
    void add(Tool tool) { m_tools.push_back(std::move(tool)); }

    // A tool result carrying `structured` as structuredContent and as text.
    static nlohmann::json result(nlohmann::json structured);
    // A refusal or error result: `sentence` first (for the model), then the JSON.
    static nlohmann::json failure(nlohmann::json structured, const std::string &sentence);

private:
    void publish();
    // The calling agent: the session's, or the actorDid argument in open mode. Sets `problem`,
    // and `mismatch` when the arguments name another agent than the caller.
    std::string actorFor(const nlohmann::json &arguments, McpSession &session, std::string *problem,
                         bool *mismatch) const;

    Step lockAcquire(const nlohmann::json &args, const std::string &actor) const;
    Step lockRelease(const nlohmann::json &args, const std::string &actor) const;
    Step lockStatus(const std::string &actor) const;
    Step leaseAcquire(const nlohmann::json &args, const std::string &actor) const;
    Step leaseRelease(const nlohmann::json &args, const std::string &actor) const;
    Step waitView(const nlohmann::json &args) const;
    // Acquire, then answer now or when the parked wait ends; `lockTools` picks the wording.
    Step acquire(const AcquireRequest &request, bool lockTools) const;

    EngineHost &m_host;
    McpSessions &m_sessions;
    bool m_open;
    std::vector<Tool> m_tools;
};

} // namespace leasehold
