// McpGuard: its side of the inner server, the calls sent there and waiting for an answer.

#include "mcpguard.h"
#include "mcpreplies.h"

using mcpreply::rpcError;
using mcpreply::toolError;
using nlohmann::json;

namespace {

std::string key(const json &id)
{
    return id.dump();
}

} // namespace

void McpGuard::forward(const json &message, Reply reply, std::function<json(json)> adjust,
                       bool toolCall)
{
    const json id = message["id"];
    if (!m_innerDead.isEmpty())
        return reply(toolCall ? toolError(id, m_innerDead) : rpcError(id, -32603, m_innerDead));
    m_inner[key(id)] = {std::move(reply), std::move(adjust), toolCall};
    m_toInner(message);
}

void McpGuard::fromInner(const json &message)
{
    if (message.is_object() && message.contains("id") && !message.contains("method")) {
        const auto it = m_inner.find(key(message["id"]));
        if (it == m_inner.end())
            return; // an answer nobody waits for (a cancelled call's)
        InnerCall call = std::move(it->second);
        m_inner.erase(it);
        return call.reply(call.adjust ? call.adjust(message) : message);
    }
    m_toClient(message); // the inner server's own requests and notifications
}

void McpGuard::innerDied(const QString &why)
{
    m_innerDead = why;
    auto waiting = std::move(m_inner);
    m_inner.clear();
    for (auto &[id, call] : waiting) {
        const json rid = json::parse(id);
        json response = call.toolCall ? toolError(rid, why) : rpcError(rid, -32603, why);
        call.reply(call.adjust ? call.adjust(response) : response);
    }
}
