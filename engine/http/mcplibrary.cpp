#include "mcplibrary.h"

#include "jsonviews.h"

namespace leasehold {

using nlohmann::json;

namespace {

constexpr const char *kStatusUri = "leasehold://status";
constexpr const char *kQueueUri = "leasehold://queue";

const char *kDiscipline =
    "You share this workspace with other agents, coordinated by Leasehold.\n"
    "1. Before changing files, call lock_acquire with every path you are about to change, in "
    "one call (a folder covers what is under it). It may wait up to 90 s for another agent.\n"
    "2. If it is refused, read who holds the path and for how long: work on something else and "
    "come back, or tell the user who has it. Do not edit paths you were refused.\n"
    "3. If you hold leases you may not wait for more: release them and acquire the whole set "
    "again in one call. A `deadlock` refusal means exactly that.\n"
    "4. Call lock_release as soon as your change is written. Leases expire on their own (300 s "
    "by default, `ttl` to change it), but a lease left to expire lowers your trust.\n"
    "5. lock_status shows what you hold and what you wait for.";

} // namespace

McpLibrary::McpLibrary(EngineHost &host)
    : m_host(host)
{}

std::string McpLibrary::instructions(bool workspace)
{
    std::string text =
        "Leasehold grants short self-expiring leases so that agents sharing a checkout or a "
        "resource do not overwrite each other. Lock what you are about to change with "
        "lock_acquire (every path in one call; it may wait), release it with lock_release "
        "as soon as the change is written, and read a refusal: it names the holder and says "
        "what to do next. lock_status shows what you hold.";
    if (workspace)
        text += " Change workspace files only through the fs_* tools: they refuse a change to a "
                "path another agent holds, a change while other agents are live unless you hold "
                "its lease, and a change to a file that changed since you read it.";
    return text;
}

json McpLibrary::listResources() const
{
    return {{"resources",
             {{{"uri", kStatusUri},
               {"name", "status"},
               {"title", "Leasehold status"},
               {"description", "Every lease, waiter, deadlock pair, pin, trust score and agent, "
                               "from one moment"},
               {"mimeType", "application/json"}},
              {{"uri", kQueueUri},
               {"name", "queue"},
               {"title", "Leasehold wait queue"},
               {"description", "Agents parked or recently refused, whom they wait for, and "
                               "deadlock pairs"},
               {"mimeType", "application/json"}}}}};
}

std::optional<json> McpLibrary::readResource(const std::string &uri) const
{
    json body;
    if (uri == kStatusUri)
        body = toJson(*m_host.sharedSnapshot());
    else if (uri == kQueueUri)
        body = toJson(m_host.engine().waitView());
    else
        return std::nullopt;
    return json{
        {"contents", {{{"uri", uri}, {"mimeType", "application/json"}, {"text", body.dump()}}}}};
}

json McpLibrary::listPrompts() const
{
    return {{"prompts",
             {{{"name", "coordinate"},
               {"title", "Coordinate with other agents"},
               {"description", "How to lock, wait, read a refusal and release when several agents "
                               "share one workspace"},
               {"arguments", json::array()}}}}};
}

std::optional<json> McpLibrary::prompt(const std::string &name) const
{
    if (name != "coordinate")
        return std::nullopt;
    return json{
        {"description", "The locking discipline for agents sharing a workspace"},
        {"messages", {{{"role", "user"}, {"content", {{"type", "text"}, {"text", kDiscipline}}}}}}};
}

} // namespace leasehold
