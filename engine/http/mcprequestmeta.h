#pragma once

// What a 2026-07-28 request must carry besides its JSON-RPC fields: the per-request `_meta`
// (protocol version, client capabilities) and, on HTTP, the standard headers that mirror the
// body (MCP-Protocol-Version, Mcp-Method, Mcp-Name), as the specification's "Server
// Validation" requires.

#include "restapi.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace leasehold::mcpmeta {

inline constexpr const char *kProtocolVersion = "io.modelcontextprotocol/protocolVersion";
inline constexpr const char *kClientCapabilities = "io.modelcontextprotocol/clientCapabilities";
inline constexpr const char *kClientInfo = "io.modelcontextprotocol/clientInfo";
inline constexpr const char *kServerInfo = "io.modelcontextprotocol/serverInfo";

// The request's `_meta`, read: the protocol version it asks for and the client's name.
struct RequestMeta
{
    std::string protocolVersion;
    std::string clientName;
    nlohmann::json capabilities = nlohmann::json::object();
};

// `params` (an object) read for its `_meta`; nothing, with `problem` naming the field, when a
// required field is missing or has the wrong type (-32602, HTTP 400).
std::optional<RequestMeta> read(const nlohmann::json &params, std::string *problem);

// True when `params` carries a `_meta` that names a protocol version (a modern request).
bool declaresVersion(const nlohmann::json &message);

// A header value as the body carries it: optional whitespace around it dropped (RFC 9110), the
// Base64 form `=?base64?...?=` decoded. Nothing, with `problem` set, when it holds characters a
// header may not carry or its Base64 is malformed.
std::optional<std::string> headerValue(const QByteArray &raw, std::string *problem);

// Why the standard headers of `call` do not match request `message` whose _meta asked for
// `version`: MCP-Protocol-Version against it, Mcp-Method against `method`, and for tools/call,
// resources/read and prompts/get, Mcp-Name against params.name or params.uri. A missing header
// is a mismatch. Empty when they all match (-32020 HeaderMismatch, HTTP 400, otherwise).
std::string headerMismatch(const RestCall &call, const nlohmann::json &message,
                           const std::string &version);

// Why the Mcp-Param-* headers of a 2026-07-28 tools/call do not mirror its `arguments`, for the
// tool's parameters marked x-mcp-header (`params`: property -> header name). A parameter given
// needs its header, equal after decoding (numbers compared as numbers); one not given must have
// none. Empty when they match (-32020 otherwise).
std::string paramHeaderMismatch(const RestCall &call, const nlohmann::json &arguments,
                                const std::vector<std::pair<std::string, std::string>> &params);

} // namespace leasehold::mcpmeta
