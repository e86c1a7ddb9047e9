// McpTools: the catalogue (names, descriptions, schemas) and the call entry point.

#include "mcptools.h"

#include "fieldreader.h"
#include "mcpschema.h"

namespace leasehold {

using nlohmann::json;

namespace {

using namespace schema;

json waiterListSchema()
{
    return {{"type", "array"},
            {"items", objectSchema({{"actorDid", kString},
                                    {"resource", kString},
                                    {"mode", kString},
                                    {"kind", {{"type", "string"}, {"enum", {"parked", "want"}}}},
                                    {"since", kInteger},
                                    {"deadline", kInteger},
                                    {"holder", {{"type", {"string", "null"}}}}})}};
}

json releaseRequestListSchema()
{
    const json urgency = {{"type", "string"}, {"enum", {"low", "normal", "high"}}};
    return {{"type", "array"},
            {"items", objectSchema({{"requestId", kString},
                                    {"leaseId", kString},
                                    {"resource", kString},
                                    {"holder", kString},
                                    {"requester", kString},
                                    {"byOperator", {{"type", "boolean"}}},
                                    {"urgency", urgency},
                                    {"reason", kString},
                                    {"raisedAt", kInteger},
                                    {"ageMs", kInteger},
                                    {"deadlineAt", {{"type", {"integer", "null"}}}},
                                    {"overdue", {{"type", "boolean"}}}})}};
}

const char *kAcquireText =
    "Claim files or named resources before you change them, so other agents working in the same "
    "checkout cannot overwrite your work (and you cannot overwrite theirs). Ask for your whole "
    "working set in one call: every path is granted or none is. Paths are relative to the "
    "workspace and a folder covers everything under it; named resources such as "
    "\"lock:deploy/production\" work too. A path may be a pattern: \"src/**/*.ts\" claims every "
    ".ts file below src (`*` within one name, `**` any depth of folders, `?` one character). "
    "A lease lasts `ttl` seconds (default 300) and ends on "
    "its own if you never release it, which lowers your trust: call lock_release as soon as your "
    "change is written. If another agent holds a path, this call WAITS up to `wait` seconds "
    "(default 90; 0 answers at once) for it to come free, so it may take a while; if your client "
    "gives up sooner, pass a smaller wait. You may not wait while you already hold leases: "
    "release them and ask for everything at once. A refusal (isError) names who holds the path, "
    "for how long, and what to do next: work on something else and come back, or tell the user "
    "who has it. `deadlock` means the holder is waiting for something you hold: release "
    "everything, then acquire the whole set in one call.";

const char *kReleaseText =
    "Give leases back as soon as your change is written. With `paths`, releases those; without, "
    "releases everything you hold. Releasing promptly raises your trust score; a lease left to "
    "expire lowers it, and blocks other agents until it does.";

const char *kStatusText =
    "Show what you hold (with the time each lease has left) and what you are waiting for or were "
    "recently refused, with whoever holds it now, and `releaseRequests`: other agents or an "
    "operator asking you to let a lease go (release it when you can, or decline). Check it before "
    "a long change to see that your leases will last, or to find out who has a path you need.";

const char *kLeaseAcquireText =
    "Ask for a lease on `resource` (or `resources`, all or none) in `mode` read, write (default) "
    "or delete, for `ttlMs` milliseconds (default 30000). With `waitMs` (at most 30000) the call "
    "waits for a held resource to come free, unless you already hold leases. A refusal names the "
    "holder, how long they have held it, and a back-off in stampede.waitMs; `deadlock` means "
    "waiting would close a cycle: release what you hold and ask again for the whole set.";

const char *kLeaseReleaseText =
    "Release `resource` (or `resources`); give the `leaseId` you were granted to be sure you "
    "release that lease and not a newer one (a different current lease is refused as "
    "stale_lease). Without resources, releases everything you hold.";

const char *kWaitText =
    "Read the queue: agents parked in a wait or recently refused on each resource, whom they are "
    "waiting for, and pairs of agents waiting on each other (deadlocks). Give `resource` to see "
    "one part of the tree.";

} // namespace

McpTools::McpTools(EngineHost &host, McpSessions &sessions, bool open)
    : m_host(host)
    , m_sessions(sessions)
    , m_open(open)
{
    publish();
}

void McpTools::publish()
{
    const json seconds = {{"type", "integer"}, {"minimum", 0}};
    const json modeSchema = {{"type", "string"}, {"enum", {"read", "write", "delete"}}};
    const json acquireOut =
        withRefusalFields({{"lease", leaseSchema()},
                           {"leases", {{"type", "array"}, {"items", leaseSchema()}}},
                           {"waitedMs", kInteger}});
    const json releaseOut =
        withRefusalFields({{"released", {{"type", "array"}, {"items", leaseSchema()}}},
                           {"trust", {{"type", "number"}}}});

    json lockIn = {
        {"paths", pathsSchema("Workspace paths or named resources, all granted or none")},
        {"ttl", described(seconds, "Seconds the lease lasts (default 300)")},
        {"wait", described(seconds, "Seconds to wait if held (default 90, at most 90)")},
        {"mode", modeSchema}};
    json releaseIn = {{"paths", pathsSchema("What to release; omit to release everything")}};
    json leaseIn = {
        {"resource", kString},
        {"resources", pathsSchema("Several resources, all granted or none")},
        {"mode", modeSchema},
        {"ttlMs", kInteger},
        {"waitMs", kInteger},
        {"lockDelayMs", described(kInteger, "Ms each name stays held back from "
                                            "everyone if the lease expires (0-60000)")}};
    json leaseReleaseIn = {{"resource", kString},
                           {"resources", pathsSchema("Several resources")},
                           {"leaseId", kString}};
    json waitIn = {{"resource", kString}};
    if (m_open) {
        const json did = {{"type", "string"},
                          {"description", "Your agent id (open mode; a key names you otherwise)"}};
        for (json *in : {&lockIn, &releaseIn, &leaseIn, &leaseReleaseIn})
            (*in)["actorDid"] = did;
    }
    json statusIn = objectSchema(json::object());
    if (m_open)
        statusIn["properties"]["actorDid"] = {{"type", "string"}};

    m_tools = {
        {"lock_acquire", "Lock paths before changing them", kAcquireText,
         objectSchema(lockIn, {"paths"}), acquireOut, true, false,
         [this](const json &a, const std::string &who) { return lockAcquire(a, who); }},
        {"lock_release", "Release locked paths", kReleaseText, objectSchema(releaseIn), releaseOut,
         true, false,
         [this](const json &a, const std::string &who) { return lockRelease(a, who); }},
        {"lock_status", "What I hold and what I wait for", kStatusText, statusIn,
         withRefusalFields({{"actorDid", kString},
                            {"trust", {{"type", "number"}}},
                            {"suspended", {{"type", "boolean"}}},
                            {"held", {{"type", "array"}, {"items", leaseSchema()}}},
                            {"waiting", waiterListSchema()},
                            {"releaseRequests", releaseRequestListSchema()},
                            {"liveAgents", kInteger}}),
         true, true, [this](const json &, const std::string &who) { return lockStatus(who); }},
        {"coordination_lease_acquire",
         "Acquire a lease",
         kLeaseAcquireText,
         objectSchema(leaseIn),
         acquireOut,
         true,
         false,
         [this](const json &a, const std::string &who) { return leaseAcquire(a, who); },
         {{"resource", "Resource"}}},
        {"coordination_lease_release",
         "Release a lease",
         kLeaseReleaseText,
         objectSchema(leaseReleaseIn),
         releaseOut,
         true,
         false,
         [this](const json &a, const std::string &who) { return leaseRelease(a, who); },
         {{"resource", "Resource"}}},
        {"coordination_wait",
         "Read the wait queue",
         kWaitText,
         objectSchema(waitIn),
         withRefusalFields({{"waiters", waiterListSchema()},
                            {"deadlocks", {{"type", "array"}, {"items", {{"type", "object"}}}}}}),
         false,
         true,
         [this](const json &a, const std::string &) { return waitView(a); },
         {{"resource", "Resource"}}},
    };
}

json McpTools::list(bool modern) const
{
    json tools = json::array();
    for (const Tool &t : m_tools) {
        json input = t.inputSchema;
        if (modern)
            for (const auto &[property, header] : t.headerParams)
                input["properties"][property]["x-mcp-header"] = header;
        tools.push_back({{"name", t.name},
                         {"title", t.title},
                         {"description", t.description},
                         {"inputSchema", std::move(input)},
                         {"outputSchema", t.outputSchema},
                         {"annotations",
                          {{"readOnlyHint", t.readOnly},
                           {"destructiveHint", false},
                           {"idempotentHint", t.readOnly},
                           {"openWorldHint", false}}}});
    }
    return {{"tools", tools}};
}

const std::vector<std::pair<std::string, std::string>> &
McpTools::headerParams(const std::string &name) const
{
    static const std::vector<std::pair<std::string, std::string>> none;
    for (const Tool &t : m_tools)
        if (t.name == name)
            return t.headerParams;
    return none;
}

std::string McpTools::resolve(const std::string &name) const
{
    static const std::pair<const char *, const char *> kAliases[] = {
        {"coordination.lease.acquire", "coordination_lease_acquire"},
        {"coordination.lease.release", "coordination_lease_release"},
        {"coordination.wait", "coordination_wait"}};
    for (const auto &[alias, published] : kAliases)
        if (name == alias)
            return published;
    for (const Tool &t : m_tools)
        if (t.name == name)
            return name;
    return {};
}

json McpTools::result(json structured)
{
    const std::string text = structured.dump();
    return {{"content", {{{"type", "text"}, {"text", text}}}},
            {"structuredContent", std::move(structured)}};
}

json McpTools::failure(json structured, const std::string &sentence)
{
    const std::string text = structured.dump();
    return {
        {"content", {{{"type", "text"}, {"text", sentence}}, {{"type", "text"}, {"text", text}}}},
        {"structuredContent", std::move(structured)},
        {"isError", true}};
}

std::string McpTools::actorFor(const json &arguments, McpSession &session, std::string *problem,
                               bool *mismatch) const
{
    FieldReader r(arguments);
    const std::optional<std::string> named = r.did("actorDid", false);
    if (r.failed()) {
        *problem = r.error();
        return {};
    }
    if (!session.agent.empty()) {
        if (named && *named != session.agent) {
            *problem =
                std::string(session.transient ? "this key acts as " : "this session acts as ") +
                session.agent + " and may not name " + *named;
            *mismatch = true;
            return {};
        }
        return session.agent;
    }
    if (!m_open || !named) {
        *problem = "name yourself: pass actorDid, or connect with an X-Agent-Id header";
        return {};
    }
    m_sessions.bind(session, *named);
    return *named;
}

std::uint64_t McpTools::call(const std::string &name, const json &arguments, McpSession &session,
                             Done done) const
{
    const Tool *tool = nullptr;
    for (const Tool &t : m_tools)
        if (t.name == name)
            tool = &t;
    std::string actor;
    if (tool->needsActor) {
        std::string problem;
        bool mismatch = false;
        actor = actorFor(arguments, session, &problem, &mismatch);
        if (actor.empty()) {
            done(failure({{"ok", false},
                          {"reason", mismatch ? "actor_mismatch" : "invalid"},
                          {"message", problem}},
                         problem));
            return 0;
        }
    }
    Step step = tool->handler(arguments, actor);
    if (step.later) {
        step.later(std::move(done));
        return 0;
    }
    if (step.waitId == 0) {
        done(std::move(step.result));
        return 0;
    }
    m_host.onWaitEnd(step.waitId, [done = std::move(done), finish = std::move(step.finish)](
                                      const WaitOutcome &outcome) { done(finish(outcome)); });
    return step.waitId;
}

} // namespace leasehold
