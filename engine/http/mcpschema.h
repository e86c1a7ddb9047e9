#pragma once

// Small builders for the JSON Schemas MCP tools publish (inputSchema / outputSchema).

#include <nlohmann/json.hpp>

namespace leasehold::schema {

extern const nlohmann::json kString;
extern const nlohmann::json kInteger;

nlohmann::json objectSchema(nlohmann::json properties,
                            nlohmann::json required = nlohmann::json::array());
// A lease as every surface shows it.
nlohmann::json leaseSchema();
// `properties` plus the fields of a refusal (ok, reason, message, holder, ...); ok required.
nlohmann::json withRefusalFields(nlohmann::json properties);
nlohmann::json described(nlohmann::json schema, const char *description);
// An array of 1 to 64 resource names or paths.
nlohmann::json pathsSchema(const char *description);

} // namespace leasehold::schema
