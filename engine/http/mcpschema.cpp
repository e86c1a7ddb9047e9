#include "mcpschema.h"

namespace leasehold::schema {

using nlohmann::json;

const json kString = {{"type", "string"}};
const json kInteger = {{"type", "integer"}};

json objectSchema(json properties, json required)
{
    json schema = {{"type", "object"}, {"properties", std::move(properties)}};
    if (!required.empty())
        schema["required"] = std::move(required);
    return schema;
}

json leaseSchema()
{
    return objectSchema({{"leaseId", kString},
                         {"resource", kString},
                         {"holder", kString},
                         {"mode", {{"type", "string"}, {"enum", {"read", "write", "delete"}}}},
                         {"token", kInteger},
                         {"grantedAt", kInteger},
                         {"expiresAt", kInteger},
                         {"ttlMs", kInteger}});
}

// The fields every refusal carries (see jsonviews' Refusal), shared by the output schemas.
json withRefusalFields(json properties)
{
    properties["ok"] = {{"type", "boolean"}};
    properties["reason"] = {
        {"type", "string"},
        {"description", "why it was refused: lease_held, deadlock, lock_required, stale_write, "
                        "not_held, stale_lease, suspended, paused, invalid, actor_mismatch, or a "
                        "file error (not_found, escapes_root, ...)"}};
    properties["message"] = kString;
    properties["resource"] = kString;
    properties["holder"] = kString;
    properties["heldResource"] = kString;
    properties["heldForMs"] = kInteger;
    properties["expiresInMs"] = kInteger;
    properties["heldBackMs"] = kInteger;
    properties["retryAfterSeconds"] = kInteger;
    properties["waitingOn"] = kString;
    properties["cycle"] = {{"type", "array"}, {"items", kString}};
    properties["stampede"] =
        objectSchema({{"waiters", kInteger}, {"admitted", kInteger}, {"waitMs", kInteger}});
    return objectSchema(std::move(properties), {"ok"});
}

json described(json schema, const char *description)
{
    schema["description"] = description;
    return schema;
}

json pathsSchema(const char *description)
{
    return {{"type", "array"},
            {"items", {{"type", "string"}, {"minLength", 1}, {"maxLength", 1024}}},
            {"minItems", 1},
            {"maxItems", 64},
            {"description", description}};
}

} // namespace leasehold::schema
