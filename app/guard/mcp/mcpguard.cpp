// McpGuard: routing between the client, the inner server and the central Leasehold.

#include "mcpguard.h"
#include "mcpreplies.h"

using nlohmann::json;
using namespace mcpreply;

namespace {

std::string key(const json &id)
{
    return id.dump();
}

} // namespace

McpGuard::McpGuard(Settings settings, Send toClient, Send toInner, QObject *parent)
    : QObject(parent)
    , m_settings(std::move(settings))
    , m_paths(m_settings.root)
    , m_toClient(std::move(toClient))
    , m_toInner(std::move(toInner))
    , m_service(m_settings.service)
    , m_central(m_settings.service)
{}

void McpGuard::fromClient(const json &message)
{
    try {
        takeFromClient(message);
    } catch (const std::exception &e) {
        // A message of a shape nobody foresaw: an error for it, never an end of the session.
        const json id = message.is_object() && message.contains("id") ? message["id"] : json();
        m_toClient(rpcError(id, -32603, QStringLiteral("leasehold guard: %1").arg(e.what())));
    }
}

void McpGuard::keepPresent()
{
    if (m_sinceContact.isValid() && m_sinceContact.elapsed() < m_settings.presenceEveryMs)
        return;
    m_sinceContact.start();
    m_service.post(QLatin1String(ServiceClient::kBase) + QStringLiteral("/check"), json::object(),
                   [](ServiceClient::Reply) {});
}

void McpGuard::takeFromClient(const json &message)
{
    keepPresent();
    if (message.is_discarded())
        return m_toClient(rpcError(nullptr, -32700, QStringLiteral("parse error: not JSON")));
    if (message.is_array())
        return batch(message);
    if (!message.is_object())
        return m_toClient(rpcError(nullptr, -32600, QStringLiteral("not a JSON-RPC message")));
    const bool hasId = message.contains("id");
    if (!message.contains("method")) {
        if (hasId && m_innerDead.isEmpty())
            m_toInner(message); // the client's answer to a request of the inner server's
        return;
    }
    if (!hasId) { // a notification
        if (message["method"] == "notifications/cancelled" && message.contains("params") &&
            message["params"].is_object() && message["params"].contains("requestId")) {
            const auto it = m_lockCalls.find(key(message["params"]["requestId"]));
            if (it != m_lockCalls.end())
                return m_central.cancel(it->second, QStringLiteral("the client cancelled it"));
        }
        if (m_innerDead.isEmpty())
            m_toInner(message);
        return;
    }
    request(message, [this](json response) { m_toClient(response); });
}

void McpGuard::request(const json &message, Reply reply)
{
    const std::string method =
        message["method"].is_string() ? message["method"].get<std::string>() : std::string();
    if (method == "tools/list")
        return listTools(message, std::move(reply));
    if (method == "tools/call") {
        if (isLockCall(message))
            return lockCall(message, std::move(reply));
        const json &params = message.value("params", json());
        if (!params.is_object() || !params.value("name", json()).is_string())
            return reply(
                rpcError(message["id"], -32602, QStringLiteral("tools/call needs params.name")));
        if (m_settings.policy.enforced(QString::fromStdString(params["name"].get<std::string>())))
            return guardedCall(message, std::move(reply));
        return forward(message, std::move(reply), {}, true);
    }
    forward(message, std::move(reply));
}

// A batch on its way: each request's slot for the answer, in the caller's order.
struct McpGuard::BatchRun
{
    std::vector<json> answers;
    std::vector<bool> answered;
    std::size_t waiting = 0;
    std::vector<std::pair<json, std::size_t>> locks, rest;
};

void McpGuard::batch(const json &messages)
{
    if (messages.empty())
        return m_toClient(rpcError(nullptr, -32600, QStringLiteral("an empty batch")));
    auto run = std::make_shared<BatchRun>();
    for (const json &m : messages) {
        if (!m.is_object() || !m.contains("method") || !m.contains("id")) {
            fromClient(m); // notifications and answers go on as they are
            continue;
        }
        const std::size_t slot = run->answers.size();
        run->answers.emplace_back();
        run->answered.push_back(false);
        ++run->waiting;
        (isLockCall(m) ? run->locks : run->rest).emplace_back(m, slot);
    }
    if (run->waiting > 0)
        runBatch(run, 0);
}

McpGuard::Reply McpGuard::batchAnswer(const std::shared_ptr<BatchRun> &run, std::size_t slot)
{
    return [this, run, slot](json response) {
        if (run->answered[slot])
            return;
        run->answered[slot] = true;
        run->answers[slot] = std::move(response);
        if (--run->waiting == 0)
            m_toClient(json(run->answers));
    };
}

void McpGuard::runBatch(const std::shared_ptr<BatchRun> &run, std::size_t lock)
{
    // The lock calls first, one after another; then the rest, which they may protect.
    if (lock < run->locks.size()) {
        Reply done = batchAnswer(run, run->locks[lock].second);
        return request(run->locks[lock].first, [this, run, lock, done](json response) {
            done(std::move(response));
            runBatch(run, lock + 1);
        });
    }
    for (const auto &[m, slot] : run->rest)
        request(m, batchAnswer(run, slot));
}
