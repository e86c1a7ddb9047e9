#pragma once

// JSON-RPC 2.0 message shapes and the HTTP answers MCP's transport gives with them.

#include "restapi.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace leasehold::rpc {

constexpr int kParseError = -32700;
constexpr int kInvalidRequest = -32600;
constexpr int kMethodNotFound = -32601;
constexpr int kInvalidParams = -32602;
constexpr int kServerError = -32000;
constexpr int kSessionNotFound = -32001;
constexpr int kResourceNotFound = -32002; // 2025 versions; 2026-07-28 says kInvalidParams
// Codes 2026-07-28 reserves (-32020 to -32099 belong to the MCP specification).
constexpr int kHeaderMismatch = -32020;
constexpr int kMissingClientCapability = -32021;
constexpr int kUnsupportedVersion = -32022;

nlohmann::json result(const nlohmann::json &id, nlohmann::json result);
nlohmann::json error(const nlohmann::json &id, int code, const std::string &message);
nlohmann::json error(const nlohmann::json &id, int code, const std::string &message,
                     nlohmann::json data);

// An HTTP answer whose body is a JSON-RPC error (for request `id`, else without one).
HttpReply httpError(int status, int code, const std::string &message,
                    const nlohmann::json &id = nullptr);
// 401 with a WWW-Authenticate challenge.
HttpReply unauthorized(const std::string &message);
// 400 with UnsupportedProtocolVersionError: the versions served, and the one asked for.
HttpReply unsupportedVersion(const std::string &requested,
                             const std::vector<std::string> &supported);
// 202 Accepted, no body: what notifications and client responses get.
HttpReply accepted();

// True for an error response whose code says the message itself was malformed.
bool isInvalidRequest(const nlohmann::json &response);

// The id of request `message` when it has a valid one (a string or an integer), else null:
// what every error about that request answers.
nlohmann::json idOf(const nlohmann::json &message);

// Why `message` is not a JSON-RPC 2.0 request, notification or response (empty when it is).
std::string malformation(const nlohmann::json &message);

} // namespace leasehold::rpc
