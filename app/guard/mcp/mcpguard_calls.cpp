// McpGuard: the calls it answers itself or judges before they go on — the tool list, the lock
// tools (the central Leasehold's), and the enforced tools.

#include "mcpguard.h"
#include "mcpreplies.h"

using nlohmann::json;
using namespace mcpreply;

namespace {

const QString kBase = QLatin1String(ServiceClient::kBase);

json strings(const QStringList &items)
{
    json list = json::array();
    for (const QString &i : items)
        list.push_back(i.toStdString());
    return list;
}

// Used when the central Leasehold cannot be asked for its own definitions: the same tools, in
// brief, saying where the full descriptions come from.
json fallbackLockTools()
{
    const json paths = {{"type", "array"}, {"items", {{"type", "string"}}}};
    const std::string note = " (Leasehold was not reachable when the tools were listed.)";
    return json::array(
        {{{"name", "lock_acquire"},
          {"description", "Claim paths before changing them; waits up to `wait` seconds." + note},
          {"inputSchema",
           {{"type", "object"},
            {"properties",
             {{"paths", paths}, {"ttl", {{"type", "integer"}}}, {"wait", {{"type", "integer"}}}}},
            {"required", {"paths"}}}}},
         {{"name", "lock_release"},
          {"description", "Give back paths (none: everything you hold)." + note},
          {"inputSchema", {{"type", "object"}, {"properties", {{"paths", paths}}}}}},
         {{"name", "lock_status"},
          {"description", "What you hold and who else is live." + note},
          {"inputSchema", {{"type", "object"}, {"properties", json::object()}}}}});
}

} // namespace

void McpGuard::withLockTools(std::function<void(const json &tools)> then)
{
    if (!m_lockTools.is_null())
        return then(m_lockTools);
    m_waitingForTools.push_back(std::move(then));
    if (m_fetchingTools)
        return;
    m_fetchingTools = true;
    m_central.call(QStringLiteral("tools/list"), json::object(), [this](CentralMcp::Answer a) {
        m_fetchingTools = false;
        json tools = json::array();
        if (a.ok && a.result.contains("tools") && a.result["tools"].is_array()) {
            for (const json &t : a.result["tools"])
                if (t.is_object() && t.value("name", json()).is_string() &&
                    isLockTool(t["name"].get<std::string>()))
                    tools.push_back(t);
            m_lockTools = tools; // kept: the service's definitions do not change while it runs
        } else {
            tools = fallbackLockTools(); // not kept: asked again next time
        }
        auto waiting = std::move(m_waitingForTools);
        m_waitingForTools.clear();
        for (auto &w : waiting)
            w(tools);
    });
}

void McpGuard::listTools(const json &message, Reply reply)
{
    const json params = message.value("params", json::object());
    const bool firstPage = !params.is_object() || !params.contains("cursor");
    auto adjust = [](json response) {
        // Another server's lock_* would be a lie next to the tools this layer routes on.
        if (response.contains("result") && response["result"].is_object() &&
            response["result"].contains("tools") && response["result"]["tools"].is_array()) {
            json kept = json::array();
            for (const json &t : response["result"]["tools"])
                if (!t.is_object() || !t.value("name", json()).is_string() ||
                    !isLockTool(t["name"].get<std::string>()))
                    kept.push_back(t);
            response["result"]["tools"] = std::move(kept);
        }
        return response;
    };
    if (!m_settings.publishTools || !firstPage)
        return forward(message, std::move(reply), adjust);
    forward(
        message,
        [this, reply](json response) {
            if (!response.contains("result") || !response["result"].is_object() ||
                !response["result"].contains("tools"))
                return reply(response);
            withLockTools([reply, response](const json &tools) mutable {
                for (const json &t : tools)
                    response["result"]["tools"].push_back(t);
                reply(response);
            });
        },
        adjust);
}

void McpGuard::lockCall(const json &message, Reply reply)
{
    const json id = message["id"];
    json params = message["params"];
    // Paths are named as the service names them: relative to the root, symlinks resolved.
    if (params.contains("arguments") && params["arguments"].is_object() &&
        params["arguments"].contains("paths") && params["arguments"]["paths"].is_array()) {
        for (json &p : params["arguments"]["paths"]) {
            if (!p.is_string())
                continue;
            const WorkspacePaths::Named n =
                m_paths.name(QString::fromStdString(p.get<std::string>()));
            if (n.judged())
                p = n.name.toStdString();
        }
    }
    const std::string requestKey = id.dump();
    const qint64 centralId = m_central.call(
        QStringLiteral("tools/call"), params, [this, id, requestKey, reply](CentralMcp::Answer a) {
            m_lockCalls.erase(requestKey);
            if (!a.ok)
                return reply(toolError(id, a.problem + QStringLiteral(" Nothing was taken.")));
            reply({{"jsonrpc", "2.0"}, {"id", id}, {"result", a.result}});
        });
    if (centralId > 0 && m_lockCalls.count(requestKey) == 0)
        m_lockCalls[requestKey] = centralId;
}

void McpGuard::guardedCall(const json &message, Reply reply)
{
    const json id = message["id"];
    const QString tool = QString::fromStdString(message["params"]["name"].get<std::string>());
    const QStringList paths =
        m_settings.policy.paths(tool, message["params"].value("arguments", json::object()));
    if (paths.isEmpty())
        return forward(message, std::move(reply), {}, true); // nothing named: nothing to judge
    json names = json::array();
    QStringList unjudged;
    for (const QString &p : paths) {
        const WorkspacePaths::Named n = m_paths.name(p);
        if (n.judged())
            names.push_back(n.name.toStdString());
        else
            unjudged << n.problem;
    }
    const json body = {{"resources", names},
                       {"mode", "write"},
                       {"pin", true},
                       {"wording", "lock"},
                       {"op", tool.left(64).toStdString()}};
    auto judged = [this, message, id, tool, unjudged, reply](ServiceClient::Reply r) {
        if (r.status == 409 || r.status == 403) {
            const QString sentence =
                QStringLiteral("Your %1 changed nothing: %2").arg(tool, r.explanation());
            return reply(toolError(id, sentence, r.body));
        }
        if (r.status != 200) {
            // Without the service nobody can say whose file this is: refuse (fail closed).
            return reply(toolError(
                id, QStringLiteral("Your %1 changed nothing: Leasehold at %2 could not be asked "
                                   "whether another agent holds it (%3). Try again shortly.")
                        .arg(tool, m_settings.service.base.toString(), r.explanation())));
        }
        const json pins = r.body.value("pins", json::array());
        const bool strict = m_settings.alwaysStrict || r.body.value("strict", true);
        QStringList unlocked;
        for (const json &u : r.body.value("uncovered", json::array()))
            if (u.is_string())
                unlocked << QString::fromStdString(u.get<std::string>());
        if (strict && (!unlocked.isEmpty() || !unjudged.isEmpty())) {
            unpin(pins);
            const QString sentence =
                unlocked.isEmpty()
                    ? QStringLiteral("Your %1 changed nothing: another agent is live, and %2, so "
                                     "no lease can cover it.")
                          .arg(tool, unjudged.join(QStringLiteral("; ")))
                    : QStringLiteral("another agent is live; lock_acquire first: call lock_acquire "
                                     "with paths %1, then repeat this %2 (it changed nothing).")
                          .arg(QString::fromStdString(strings(unlocked).dump()), tool);
            return reply(toolError(id, sentence,
                                   {{"ok", false},
                                    {"reason", "lock_required"},
                                    {"message", sentence.toStdString()},
                                    {"paths", strings(unlocked)}}));
        }
        const QString warning =
            unjudged.isEmpty()
                ? QString()
                : QStringLiteral("Leasehold could not judge: %1; the call went ahead unguarded.")
                      .arg(unjudged.join(QStringLiteral("; ")));
        forward(
            message, reply,
            [this, pins, warning](json response) {
                unpin(pins);
                if (!warning.isEmpty() && response.contains("result") &&
                    response["result"].is_object())
                    response["result"]["leases-warning"] = warning.toStdString();
                return response;
            },
            true);
    };
    m_sinceContact.start();
    m_service.post(kBase + QStringLiteral("/check"), body, judged);
}

void McpGuard::unpin(const json &pins)
{
    for (const json &p : pins)
        if (p.is_object() && p.value("pinId", json()).is_string())
            m_service.post(kBase + QStringLiteral("/unpin"), {{"pinId", p["pinId"]}},
                           [](ServiceClient::Reply) {});
}
