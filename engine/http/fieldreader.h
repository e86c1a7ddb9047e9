#pragma once

#include "did.h"

#include <nlohmann/json.hpp>

#include <QByteArray>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace leasehold {

// Parses a request body as JSON of any shape, refusing nesting deeper than `maxDepth` before
// the (recursive) parser sees it.
std::optional<nlohmann::json> parseJson(const QByteArray &body, std::string *error,
                                        int maxDepth = 32);

// Parses a request body as a JSON object, refusing what could hurt the server before the
// parser sees it: bodies over `maxBytes` and nesting deeper than `maxDepth`. Returns the object
// or sets `error` to a sentence for the client.
std::optional<nlohmann::json> parseJsonObject(const QByteArray &body, std::string *error,
                                              int maxDepth = 32);

// Reads typed fields from a JSON object; the first problem is kept as a message that names the
// field ("ttlMs must be an integer"). Every accessor returns nothing once a problem was found.
class FieldReader
{
public:
    explicit FieldReader(const nlohmann::json &object)
        : m_object(object)
    {}

    std::optional<std::string> string(const char *name, bool required, std::size_t maxBytes);
    std::optional<std::int64_t> integer(const char *name, bool required, std::int64_t min,
                                        std::int64_t max);
    std::optional<bool> boolean(const char *name, bool required);
    std::optional<std::vector<std::string>> strings(const char *name, bool required,
                                                    std::size_t maxItems, std::size_t maxBytes);
    // A string that keeps the DID rule (did.h); the problem names the field.
    std::optional<std::string> did(const char *name, bool required);
    bool has(const char *name) const { return m_object.contains(name); }

    void fail(std::string message);
    bool failed() const { return !m_error.empty(); }
    const std::string &error() const { return m_error; }

private:
    // The field, or nullptr when absent (failing when required) or after an earlier failure.
    const nlohmann::json *lookup(const char *name, bool required);

    const nlohmann::json &m_object;
    std::string m_error;
};

} // namespace leasehold
