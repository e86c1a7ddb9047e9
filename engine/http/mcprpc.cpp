#include "mcprpc.h"

namespace leasehold::rpc {

using nlohmann::json;

json result(const json &id, json result)
{
    return {{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}

json error(const json &id, int code, const std::string &message)
{
    return {{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", message}}}};
}

json error(const json &id, int code, const std::string &message, json data)
{
    json out = error(id, code, message);
    out["error"]["data"] = std::move(data);
    return out;
}

HttpReply httpError(int status, int code, const std::string &message, const json &id)
{
    HttpReply reply;
    reply.status = status;
    reply.body = error(id, code, message);
    return reply;
}

json idOf(const json &message)
{
    const json id = message.is_object() ? message.value("id", json()) : json();
    return id.is_string() || id.is_number_integer() ? id : json();
}

HttpReply unauthorized(const std::string &message)
{
    HttpReply reply = httpError(401, kServerError, message);
    reply.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"leasehold\"");
    return reply;
}

HttpReply unsupportedVersion(const std::string &requested,
                             const std::vector<std::string> &supported)
{
    std::string list;
    for (const std::string &version : supported)
        list += (list.empty() ? "" : ", ") + version;
    HttpReply reply;
    reply.status = 400;
    reply.body = error(nullptr, kUnsupportedVersion,
                       "Unsupported protocol version " + requested + "; this server speaks " + list,
                       {{"supported", supported}, {"requested", requested}});
    return reply;
}

HttpReply accepted()
{
    HttpReply reply;
    reply.status = 202;
    reply.raw = QByteArray();
    return reply;
}

bool isInvalidRequest(const json &response)
{
    const auto it = response.find("error");
    if (it == response.end() || !it->is_object())
        return false;
    const int code = it->value("code", 0);
    return code == kInvalidRequest || code == kParseError;
}

std::string malformation(const json &message)
{
    if (!message.is_object())
        return "a message must be a JSON object";
    const auto version = message.find("jsonrpc");
    if (version == message.end() || *version != "2.0")
        return "jsonrpc must be \"2.0\"";
    const auto id = message.find("id");
    if (id != message.end() && !id->is_string() && !id->is_number_integer())
        return "id must be a string or an integer";
    const auto method = message.find("method");
    if (method != message.end()) {
        if (!method->is_string() || method->get_ref<const std::string &>().empty())
            return "method must be a non-empty string";
        return {};
    }
    if (id != message.end() && (message.contains("result") || message.contains("error")))
        return {};
    return "a message needs a method (or, as a response, an id with result or error)";
}

} // namespace leasehold::rpc
