#include "fieldreader.h"

#include "did.h"

namespace leasehold {

using nlohmann::json;

std::optional<json> parseJson(const QByteArray &body, std::string *error, int maxDepth)
{
    // Depth pre-scan: the parser recurses, so hostile nesting must not reach it.
    int depth = 0;
    bool inString = false;
    for (qsizetype i = 0; i < body.size(); ++i) {
        const char c = body[i];
        if (inString) {
            if (c == '\\')
                ++i;
            else if (c == '"')
                inString = false;
        } else if (c == '"') {
            inString = true;
        } else if (c == '{' || c == '[') {
            if (++depth > maxDepth) {
                *error = "body is nested deeper than " + std::to_string(maxDepth) + " levels";
                return std::nullopt;
            }
        } else if (c == '}' || c == ']') {
            --depth;
        }
    }
    json doc = json::parse(body.begin(), body.end(), nullptr, false);
    if (doc.is_discarded()) {
        *error =
            body.trimmed().isEmpty() ? "body is empty; expected JSON" : "body is not valid JSON";
        return std::nullopt;
    }
    return doc;
}

std::optional<json> parseJsonObject(const QByteArray &body, std::string *error, int maxDepth)
{
    if (body.trimmed().isEmpty()) {
        *error = "body is empty; expected a JSON object";
        return std::nullopt;
    }
    std::optional<json> doc = parseJson(body, error, maxDepth);
    if (doc && !doc->is_object()) {
        *error = "body must be a JSON object";
        return std::nullopt;
    }
    return doc;
}

const json *FieldReader::lookup(const char *name, bool required)
{
    if (failed())
        return nullptr;
    auto it = m_object.find(name);
    if (it == m_object.end() || it->is_null()) {
        if (required)
            fail(std::string(name) + " is required");
        return nullptr;
    }
    return &*it;
}

void FieldReader::fail(std::string message)
{
    if (m_error.empty())
        m_error = std::move(message);
}

std::optional<std::string> FieldReader::string(const char *name, bool required,
                                               std::size_t maxBytes)
{
    const json *it = lookup(name, required);
    if (!it)
        return std::nullopt;
    if (!it->is_string()) {
        fail(std::string(name) + " must be a string");
        return std::nullopt;
    }
    const std::string &value = it->get_ref<const std::string &>();
    if (value.empty() || value.size() > maxBytes) {
        fail(std::string(name) + " must be 1 to " + std::to_string(maxBytes) + " bytes long");
        return std::nullopt;
    }
    return value;
}

std::optional<std::int64_t> FieldReader::integer(const char *name, bool required, std::int64_t min,
                                                 std::int64_t max)
{
    const json *it = lookup(name, required);
    if (!it)
        return std::nullopt;
    if (!it->is_number_integer()) {
        fail(std::string(name) + " must be an integer");
        return std::nullopt;
    }
    if (it->is_number_unsigned() && it->get<std::uint64_t>() > std::uint64_t(max)) {
        fail(std::string(name) + " must be at most " + std::to_string(max));
        return std::nullopt;
    }
    const std::int64_t value = it->get<std::int64_t>();
    if (value < min || value > max) {
        fail(std::string(name) + " must be from " + std::to_string(min) + " to " +
             std::to_string(max));
        return std::nullopt;
    }
    return value;
}

std::optional<bool> FieldReader::boolean(const char *name, bool required)
{
    const json *it = lookup(name, required);
    if (!it)
        return std::nullopt;
    if (!it->is_boolean()) {
        fail(std::string(name) + " must be true or false");
        return std::nullopt;
    }
    return it->get<bool>();
}

std::optional<std::vector<std::string>>
FieldReader::strings(const char *name, bool required, std::size_t maxItems, std::size_t maxBytes)
{
    const json *it = lookup(name, required);
    if (!it)
        return std::nullopt;
    if (!it->is_array() || it->empty() || it->size() > maxItems) {
        fail(std::string(name) + " must be an array of 1 to " + std::to_string(maxItems) +
             " strings");
        return std::nullopt;
    }
    std::vector<std::string> out;
    for (std::size_t i = 0; i < it->size(); ++i) {
        const json &item = (*it)[i];
        if (!item.is_string() || item.get_ref<const std::string &>().empty() ||
            item.get_ref<const std::string &>().size() > maxBytes) {
            fail(std::string(name) + "[" + std::to_string(i) + "] must be a string of 1 to " +
                 std::to_string(maxBytes) + " bytes");
            return std::nullopt;
        }
        out.push_back(item.get<std::string>());
    }
    return out;
}

std::optional<std::string> FieldReader::did(const char *name, bool required)
{
    std::optional<std::string> value = string(name, required, kMaxDidBytes + 1);
    if (!value)
        return std::nullopt;
    if (const std::string problem = didProblem(*value); !problem.empty()) {
        fail(std::string(name) + " " + problem);
        return std::nullopt;
    }
    return value;
}

} // namespace leasehold
