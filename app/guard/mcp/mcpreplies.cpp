#include "mcpreplies.h"

using nlohmann::json;

namespace mcpreply {

bool isLockTool(const std::string &name)
{
    return name == "lock_acquire" || name == "lock_release" || name == "lock_status";
}

bool isLockCall(const json &message)
{
    return message.is_object() && message.value("method", json()) == "tools/call" &&
           message.contains("params") && message["params"].is_object() &&
           message["params"].value("name", json()).is_string() &&
           isLockTool(message["params"]["name"].get<std::string>());
}

json toolError(const json &id, const QString &text, json details)
{
    json result = {{"content", json::array({{{"type", "text"}, {"text", text.toStdString()}}})},
                   {"isError", true}};
    // Not structuredContent: a client checks that against the inner tool's output schema, which
    // a refusal of the guard's does not follow. The details travel in _meta instead.
    if (!details.is_null())
        result["_meta"] = {{"leasehold", std::move(details)}};
    return {{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}

json rpcError(const json &id, int code, const QString &text)
{
    return {{"jsonrpc", "2.0"},
            {"id", id},
            {"error", {{"code", code}, {"message", text.toStdString()}}}};
}

} // namespace mcpreply
