#include "mcprequestmeta.h"

namespace leasehold::mcpmeta {

using nlohmann::json;

namespace {

constexpr QByteArrayView kSentinelStart("=?base64?");
constexpr QByteArrayView kSentinelEnd("?=");

// The body value Mcp-Name mirrors, for the methods that have one.
std::optional<std::string> nameField(const std::string &method, const json &params)
{
    const char *field = method == "tools/call" || method == "prompts/get" ? "name"
                        : method == "resources/read"                      ? "uri"
                                                                          : nullptr;
    if (!field)
        return std::nullopt;
    const auto it = params.find(field);
    if (it == params.end() || !it->is_string())
        return std::string(); // the method's own checks name the missing field
    return it->get<std::string>();
}

} // namespace

std::optional<RequestMeta> read(const json &params, std::string *problem)
{
    const auto meta = params.find("_meta");
    if (meta == params.end() || !meta->is_object()) {
        *problem = "params._meta is required (an object with " + std::string(kProtocolVersion) +
                   " and " + kClientCapabilities + ")";
        return std::nullopt;
    }
    RequestMeta out;
    const auto version = meta->find(kProtocolVersion);
    if (version == meta->end() || !version->is_string() ||
        version->get_ref<const std::string &>().empty()) {
        *problem = "params._meta[\"" + std::string(kProtocolVersion) + "\"] is required (a string)";
        return std::nullopt;
    }
    out.protocolVersion = version->get<std::string>();
    const auto capabilities = meta->find(kClientCapabilities);
    if (capabilities == meta->end() || !capabilities->is_object()) {
        *problem =
            "params._meta[\"" + std::string(kClientCapabilities) + "\"] is required (an object)";
        return std::nullopt;
    }
    out.capabilities = *capabilities;
    const auto info = meta->find(kClientInfo);
    if (info != meta->end()) {
        if (!info->is_object()) {
            *problem = "params._meta[\"" + std::string(kClientInfo) + "\"] must be an object";
            return std::nullopt;
        }
        const auto name = info->find("name");
        if (name != info->end() && name->is_string())
            out.clientName = name->get<std::string>().substr(0, 128);
    }
    return out;
}

bool declaresVersion(const json &message)
{
    if (!message.is_object())
        return false;
    const auto params = message.find("params");
    if (params == message.end() || !params->is_object())
        return false;
    const auto meta = params->find("_meta");
    return meta != params->end() && meta->is_object() && meta->contains(kProtocolVersion);
}

std::optional<std::string> headerValue(const QByteArray &raw, std::string *problem)
{
    for (const char c : raw) {
        const auto byte = static_cast<unsigned char>(c);
        if ((byte < 0x20 && byte != '\t') || byte > 0x7e) {
            *problem = "holds a character a header may not carry (encode it as =?base64?...?=)";
            return std::nullopt;
        }
    }
    const QByteArray value = raw.trimmed();
    if (!value.startsWith(kSentinelStart) || !value.endsWith(kSentinelEnd) ||
        value.size() < kSentinelStart.size() + kSentinelEnd.size())
        return value.toStdString();
    const QByteArray inner = value.mid(kSentinelStart.size(),
                                       value.size() - kSentinelStart.size() - kSentinelEnd.size());
    // Padded Base64 only: Qt would accept "SGVsbG8" without its '=', the specification not.
    const auto decoded =
        QByteArray::fromBase64Encoding(inner, QByteArray::AbortOnBase64DecodingErrors);
    if (inner.size() % 4 != 0 || !decoded) {
        *problem = "is not valid Base64 inside =?base64?...?=";
        return std::nullopt;
    }
    return decoded.decoded.toStdString();
}

std::string headerMismatch(const RestCall &call, const json &message, const std::string &version)
{
    const std::string &method = message["method"].get_ref<const std::string &>();
    const json params = message.value("params", json::object());
    struct Expected
    {
        const char *header;
        std::string body;
        bool encoded; // may use the Base64 form
    };
    std::vector<Expected> expected = {{"MCP-Protocol-Version", version, false},
                                      {"Mcp-Method", method, false}};
    if (std::optional<std::string> name = nameField(method, params))
        expected.push_back({"Mcp-Name", *name, true});
    for (const Expected &e : expected) {
        const QByteArray raw = call.header(e.header);
        if (raw.isNull() || raw.trimmed().isEmpty())
            return "Header mismatch: the " + std::string(e.header) + " header is required";
        std::string problem;
        std::optional<std::string> value = headerValue(raw, &problem);
        if (value && !e.encoded)
            value = raw.trimmed().toStdString(); // only Mcp-Name (and Mcp-Param-*) may be encoded
        if (!value)
            return "Header mismatch: the " + std::string(e.header) + " header " + problem;
        if (*value != e.body)
            return "Header mismatch: " + std::string(e.header) + " header value '" + *value +
                   "' does not match body value '" + e.body + "'";
    }
    return {};
}

std::string paramHeaderMismatch(const RestCall &call, const json &arguments,
                                const std::vector<std::pair<std::string, std::string>> &params)
{
    for (const auto &[property, name] : params) {
        const std::string header = "Mcp-Param-" + name;
        const QByteArray raw = call.header(QByteArray::fromStdString(header));
        const json value = arguments.is_object() ? arguments.value(property, json()) : json();
        if (value.is_null()) {
            if (!raw.isEmpty())
                return "Header mismatch: " + header + " is sent but arguments." + property +
                       " is not";
            continue;
        }
        if (raw.isEmpty())
            return "Header mismatch: the " + header + " header is required when arguments." +
                   property + " is given";
        std::string problem;
        const std::optional<std::string> decoded = headerValue(raw, &problem);
        if (!decoded)
            return "Header mismatch: the " + header + " header " + problem;
        bool same = false;
        if (value.is_string())
            same = *decoded == value.get<std::string>();
        else if (value.is_boolean())
            same = *decoded == (value.get<bool>() ? "true" : "false");
        else if (value.is_number()) {
            const json number = json::parse(*decoded, nullptr, false);
            same = number.is_number() && number.get<double>() == value.get<double>();
        }
        if (!same)
            return "Header mismatch: " + header + " header value '" + *decoded +
                   "' does not match arguments." + property;
    }
    return {};
}

} // namespace leasehold::mcpmeta
