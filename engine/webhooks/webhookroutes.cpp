#include "webhookroutes.h"

#include "enginehost.h"
#include "fieldreader.h"
#include "httpfront.h"
#include "webhooks.h"

namespace leasehold {

using nlohmann::json;

namespace {

struct Outcome
{
    HttpReply reply;
};

std::optional<json> adminBody(const RestCall &call, const Respond &respond)
{
    std::string error;
    std::optional<json> body =
        parseJsonObject(call.body.trimmed().isEmpty() ? "{}" : call.body, &error);
    if (!body)
        respond(RestApi::invalid(error));
    return body;
}

// The endpoint a request describes, or nothing (having answered 400 naming the field).
std::optional<WebhookEndpoint> endpointFrom(const json &body, const Respond &respond)
{
    FieldReader r(body);
    WebhookEndpoint e;
    const auto url = r.string("url", true, 2048);
    const auto secret = r.string("secret", true, 512);
    const auto events = r.strings("events", false, 16, 64);
    const auto format = r.string("format", false, 16);
    if (r.failed()) {
        respond(RestApi::invalid(r.error()));
        return std::nullopt;
    }
    e.url = *url;
    e.secret = *secret;
    if (events)
        for (const std::string &name : *events)
            if (name != "all")
                e.events.push_back(name);
    if (format)
        e.format = *format;
    if (const std::string problem = checkWebhookEndpoint(e); !problem.empty()) {
        respond(RestApi::invalid(problem));
        return std::nullopt;
    }
    return e;
}

std::optional<std::string> idFrom(const json &body, const Respond &respond)
{
    FieldReader r(body);
    const auto id = r.string("id", true, 64);
    if (r.failed()) {
        respond(RestApi::invalid(r.error()));
        return std::nullopt;
    }
    return id;
}

} // namespace

void addWebhookRoutes(HttpFront &front, EngineHost &host, Webhooks *webhooks)
{
    const QString base = QLatin1String(RestApi::kBase) + QStringLiteral("/admin/webhooks");
    auto unavailable = [](const Respond &respond) {
        respond(RestApi::problem(503, "webhooks_unavailable",
                                 "webhooks are delivered by the cluster's leader; ask it"));
    };
    auto answer = [&host, webhooks](const Respond &respond,
                                    std::function<HttpReply(WebhookDispatcher &)> work) {
        webhooks->ask<Outcome>(
            [work = std::move(work)](WebhookDispatcher &d) { return Outcome{work(d)}; }, &host,
            [respond](Outcome o) { respond(std::move(o.reply)); });
    };

    front.addRoute(
        "GET", base, Access::Admin,
        QStringLiteral(
            "Webhook endpoints with their tallies and last deliveries (secrets shown as set)"),
        [=](const RestCall &, const Respond &respond, Deferral &) {
            if (!webhooks)
                return unavailable(respond);
            answer(respond, [](WebhookDispatcher &d) {
                HttpReply reply;
                reply.body = {{"ok", true}, {"webhooks", d.list(10)}};
                return reply;
            });
        });
    front.addRoute("POST", base, Access::Admin,
                   QStringLiteral("Add a webhook endpoint: {url, secret, events?, format?}"),
                   [=](const RestCall &call, const Respond &respond, Deferral &) {
                       const std::optional<json> body = adminBody(call, respond);
                       if (!body)
                           return;
                       std::optional<WebhookEndpoint> e = endpointFrom(*body, respond);
                       if (!e)
                           return;
                       if (!webhooks)
                           return unavailable(respond);
                       answer(respond, [e = std::move(*e)](WebhookDispatcher &d) {
                           std::string error;
                           const std::optional<WebhookEndpoint> added = d.add(e, &error);
                           if (!added)
                               return RestApi::problem(500, "outbox_failed", error);
                           HttpReply reply;
                           reply.status = 201;
                           reply.body = {{"ok", true},
                                         {"id", added->id},
                                         {"url", added->url},
                                         {"events", added->events.empty() ? json::array({"all"})
                                                                          : json(added->events)},
                                         {"format", added->format},
                                         {"secret", "set"}};
                           return reply;
                       });
                   });
    // The routes that name one endpoint: {id}, then `work` on the delivery thread.
    auto byId = [=,
                 &front](const QString &path, const QString &summary,
                         std::function<HttpReply(WebhookDispatcher &, const std::string &)> work) {
        front.addRoute("POST", base + path, Access::Admin, summary,
                       [=](const RestCall &call, const Respond &respond, Deferral &) {
                           const std::optional<json> body = adminBody(call, respond);
                           std::optional<std::string> id =
                               body ? idFrom(*body, respond) : std::nullopt;
                           if (!id)
                               return;
                           if (!webhooks)
                               return unavailable(respond);
                           answer(respond, [work, id = std::move(*id)](WebhookDispatcher &d) {
                               return work(d, id);
                           });
                       });
    };
    byId(QStringLiteral("/remove"),
         QStringLiteral("Remove a webhook endpoint added at run time: {id}"),
         [](WebhookDispatcher &d, const std::string &id) {
             std::string error;
             int status = 404;
             if (!d.remove(id, &error, &status))
                 return RestApi::problem(status, status == 404 ? "not_found" : "configured", error);
             HttpReply reply;
             reply.body = {{"ok", true}, {"removed", id}};
             return reply;
         });
    byId(QStringLiteral("/test"),
         QStringLiteral("Queue a test delivery to a webhook endpoint: {id}"),
         [](WebhookDispatcher &d, const std::string &id) {
             const std::optional<std::string> delivery = d.test(id);
             if (!delivery)
                 return RestApi::problem(404, "not_found",
                                         "no webhook " + id + " (see ctl webhooks list)");
             HttpReply reply;
             reply.status = 202;
             reply.body = {{"ok", true}, {"id", id}, {"deliveryId", *delivery}};
             return reply;
         });
}

} // namespace leasehold
