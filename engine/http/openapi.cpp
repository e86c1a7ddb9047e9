#include "openapi.h"

namespace leasehold {

using nlohmann::json;

namespace {

json str()
{
    return {{"type", "string"}};
}
json integer()
{
    return {{"type", "integer"}, {"minimum", 0}};
}
json strings()
{
    return {{"type", "array"}, {"items", str()}, {"minItems", 1}, {"maxItems", 64}};
}

// The request body of each POST route, by the last part of its path.
json requestSchema(const QString &path)
{
    const QString last = path.section('/', -1);
    json props = json::object();
    json required = json::array();
    if (last == QLatin1String("lease")) {
        props = {{"resource", str()},
                 {"resources", strings()},
                 {"actorDid", str()},
                 {"mode", {{"type", "string"}, {"enum", {"read", "write", "delete"}}}},
                 {"ttlMs", integer()},
                 {"waitMs", integer()},
                 {"lockDelayMs",
                  {{"type", "integer"},
                   {"minimum", 0},
                   {"maximum", 60000},
                   {"description", "How long each name is held back from everyone after the "
                                   "lease ends without a release (expiry, an operator)"}}},
                 {"waitWhileHolding",
                  {{"type", "boolean"},
                   {"description", "With waitMs: park even while the caller holds other leases "
                                   "(a wait that would close a cycle is refused as deadlock)"}}},
                 {"wording", {{"type", "string"}, {"enum", {"rest", "lock", "tool"}}}}};
    } else if (last == QLatin1String("release-request")) {
        props = {{"resource", str()},
                 {"leaseId", str()},
                 {"actorDid", str()},
                 {"reason", str()},
                 {"urgency", {{"type", "string"}, {"enum", {"low", "normal", "high"}}}},
                 {"deadlineSeconds", {{"type", "integer"}, {"minimum", 1}, {"maximum", 604800}}}};
        required = {"reason"};
    } else if (last == QLatin1String("decline")) {
        props = {{"actorDid", str()}, {"reason", str()}};
    } else if (last == QLatin1String("release")) {
        props = {
            {"resource", str()}, {"resources", strings()}, {"actorDid", str()}, {"leaseId", str()}};
    } else if (last == QLatin1String("renew")) {
        props = {
            {"resource", str()}, {"actorDid", str()}, {"leaseId", str()}, {"ttlMs", integer()}};
        required = {"resource", "leaseId"};
    } else if (last == QLatin1String("check")) {
        props = {{"resource", str()},
                 {"resources", strings()},
                 {"actorDid", str()},
                 {"mode", {{"type", "string"}, {"enum", {"read", "write", "delete"}}}},
                 {"pin", {{"type", "boolean"}}},
                 {"op", str()},
                 {"wording", {{"type", "string"}, {"enum", {"rest", "lock", "tool"}}}}};
    } else if (last == QLatin1String("pin")) {
        props = {{"leaseId", str()}, {"actorDid", str()}};
        required = {"leaseId"};
    } else if (last == QLatin1String("unpin")) {
        props = {{"pinId", str()}, {"actorDid", str()}};
        required = {"pinId"};
    } else if (last == QLatin1String("release-holder")) {
        props = {{"actorDid", str()}};
        required = {"actorDid"};
    } else if (last == QLatin1String("pause")) {
        props = {{"paused", {{"type", "boolean"}}}};
        required = {"paused"};
    } else if (last == QLatin1String("suspend")) {
        props = {{"actorDid", str()}, {"suspended", {{"type", "boolean"}}}};
        required = {"actorDid", "suspended"};
    } else if (last == QLatin1String("sweep")) {
        props = {{"notLiveForMs", {{"type", "integer"}, {"minimum", 60000}}},
                 {"dryRun", {{"type", "boolean"}}}};
        required = {"notLiveForMs"};
    } else if (last == QLatin1String("webhooks")) {
        props = {{"url", str()},
                 {"secret", str()},
                 {"events", strings()},
                 {"format", {{"type", "string"}, {"enum", {"json", "slack"}}}}};
        required = {"url", "secret"};
    } else if (last == QLatin1String("remove") || last == QLatin1String("test")) {
        props = {{"id", str()}};
        required = {"id"};
    }
    json schema = {{"type", "object"}, {"properties", props}};
    if (!required.empty())
        schema["required"] = required;
    return schema;
}

json problem(const char *description)
{
    return {{"description", description},
            {"content",
             {{"application/json", {{"schema", {{"$ref", "#/components/schemas/Problem"}}}}}}}};
}

} // namespace

json openApiDocument(const std::vector<Route> &routes, const QString &version)
{
    json paths = json::object();
    for (const Route &route : routes) {
        json op = {{"summary", route.summary.toStdString()},
                   {"responses",
                    {{"200", {{"description", "Success"}}},
                     {"400", problem("Bad input; error names the field")},
                     {"404", problem("Unknown route")},
                     {"405", problem("Wrong method")}}}};
        if (route.access != Access::Public) {
            op["security"] = json::array({{{"bearer", json::array()}}});
            op["responses"]["401"] = problem("Missing or unknown key");
            op["responses"]["403"] = problem("Key may not act as that agent or is not admin");
        }
        if (route.method == "POST") {
            op["requestBody"] = {
                {"required", true},
                {"content", {{"application/json", {{"schema", requestSchema(route.path)}}}}}};
            op["responses"]["409"] = problem("Refused: lease_held, deadlock, stale_lease, "
                                             "not_held, suspended or paused (Retry-After set)");
            op["responses"]["413"] = problem("Body larger than 1 MiB");
        }
        paths[route.path.toStdString()][route.method.toLower().toStdString()] = op;
    }
    return {{"openapi", "3.1.0"},
            {"info",
             {{"title", "Leasehold"},
              {"version", version.toStdString()},
              {"description", "Short self-expiring leases for fleets of AI agents."}}},
            {"paths", paths},
            {"components",
             {{"securitySchemes", {{"bearer", {{"type", "http"}, {"scheme", "bearer"}}}}},
              {"schemas",
               {{"Problem",
                 {{"type", "object"},
                  {"properties",
                   {{"ok", {{"type", "boolean"}}},
                    {"reason", str()},
                    {"error", str()},
                    {"message", str()}}},
                  {"required", {"ok", "reason"}}}}}}}}};
}

} // namespace leasehold
