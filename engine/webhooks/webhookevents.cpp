#include "webhookevents.h"

#include "leasestore.h"
#include "ledgerjson.h"

#include <QCryptographicHash>
#include <QRandomGenerator>
#include <QUrl>

#include <algorithm>

namespace leasehold {

using nlohmann::json;

const std::vector<WebhookEventName> &webhookEventNames()
{
    static const std::vector<WebhookEventName> all = {
        {"deadlock", "a request was refused because it would close a wait cycle"},
        {"expired", "a lease expired on its holder (no release)"},
        {"force_release", "an operator released a holder's leases, one lease, or all"},
        {"release_request", "a release request was raised, declined, or went overdue"},
        {"suspended", "an operator suspended an agent"},
        {"store", "the store stopped recording grants, or records them again"},
        {"leader", "this instance became the cluster's leader"},
        {"hot_resource", "one resource refused more requests in a minute than the threshold"},
    };
    return all;
}

bool isWebhookEventName(std::string_view name)
{
    const auto &all = webhookEventNames();
    return std::any_of(all.begin(), all.end(),
                       [name](const WebhookEventName &e) { return name == e.name; });
}

namespace {

WebhookEvent fromEvent(const LedgerEvent &e, std::string_view kindName, const char *name,
                       std::string summary)
{
    return {name, std::string(kindName), e.at, std::move(summary), toJson(e)};
}

std::string cycleText(const LedgerEvent &e)
{
    std::string out;
    for (const CycleStep &step : e.facts.cycle)
        out += (out.empty() ? "" : " -> ") + step.agent;
    if (!e.facts.cycle.empty())
        out += " -> " + e.facts.cycle.front().agent;
    return out;
}

} // namespace

std::optional<WebhookEvent> webhookEventFromLedger(const LedgerEvent &e, std::string_view kindName)
{
    switch (e.kind) {
    case EventKind::Refused:
        if (e.reason != "deadlock")
            return std::nullopt;
        return fromEvent(e, kindName, "deadlock",
                         e.actorDid + " was refused " + e.resource +
                             ": granting it would close a wait cycle (" + cycleText(e) + ")");
    case EventKind::Expired:
        return fromEvent(e, kindName, "expired",
                         e.actorDid + "'s lease on " + e.resource + " expired without a release" +
                             (e.facts.whileDown ? " (while the service was down)" : ""));
    case EventKind::AdminReleaseHolder:
        return fromEvent(e, kindName, "force_release",
                         e.actorDid + " force-released the leases of " + e.facts.target + " (" +
                             std::to_string(std::max<std::int64_t>(e.facts.released, 0)) + ")");
    case EventKind::AdminReleaseAll:
        return fromEvent(e, kindName, "force_release",
                         e.actorDid + " force-released every lease (" +
                             std::to_string(std::max<std::int64_t>(e.facts.released, 0)) + ")");
    case EventKind::AdminReleaseLease:
        return fromEvent(e, kindName, "force_release",
                         e.actorDid + " force-released the lease on " + e.resource);
    case EventKind::AdminSuspend:
        if (!e.facts.suspended)
            return std::nullopt;
        return fromEvent(e, kindName, "suspended", e.actorDid + " suspended " + e.facts.target);
    default:
        // A default, not every kind: kinds added later (release requests) are told apart by
        // their name below.
        break;
    }
    static constexpr std::string_view kRequest = "coordination.release_request.";
    if (kindName.substr(0, kRequest.size()) != kRequest)
        return std::nullopt;
    const std::string_view what = kindName.substr(kRequest.size());
    if (what != "raised" && what != "declined" && what != "overdue")
        return std::nullopt;
    return fromEvent(e, kindName, "release_request",
                     "release request " + std::string(what) + " on " + e.resource + " (" +
                         e.actorDid + (e.reason.empty() ? "" : ": " + e.reason) + ")");
}

WebhookEvent storeHealthEvent(const StoreHealth &health, std::int64_t at)
{
    WebhookEvent e{"store",
                   "service.store",
                   at,
                   health.ok() ? std::string("the store records grants again")
                               : std::string("the store cannot record grants: ") + health.phrase(),
                   {{"ok", health.ok()}, {"store", health.reasonName()}}};
    if (!health.ok())
        e.details["detail"] = health.detail;
    return e;
}

WebhookEvent leaderEvent(const std::string &leader, std::int64_t term, std::int64_t at)
{
    return {"leader",
            "service.leader",
            at,
            leader + " leads the cluster (term " + std::to_string(term) + ")",
            {{"leader", leader}, {"term", term}}};
}

WebhookEvent hotResourceEvent(const std::string &resource, std::int64_t refusals,
                              std::int64_t threshold, std::int64_t at)
{
    return {"hot_resource",
            "service.hot_resource",
            at,
            resource + " refused " + std::to_string(refusals) +
                " requests within a minute (threshold " + std::to_string(threshold) + ")",
            {{"resource", resource}, {"refusalsPerMinute", refusals}, {"threshold", threshold}}};
}

WebhookEvent testEvent(const std::string &endpointId, std::int64_t at)
{
    return {"test",
            "service.test",
            at,
            "a test delivery to webhook " + endpointId,
            {{"endpoint", endpointId}}};
}

bool WebhookEndpoint::wants(const std::string &event) const
{
    return events.empty() || std::find(events.begin(), events.end(), event) != events.end();
}

std::string checkWebhookEndpoint(const WebhookEndpoint &e)
{
    const QUrl url(QString::fromStdString(e.url), QUrl::StrictMode);
    if (e.url.empty())
        return "url is required";
    if (!url.isValid() || (url.scheme() != "http" && url.scheme() != "https") ||
        url.host().isEmpty() || e.url.size() > 2048)
        return "url must be an http:// or https:// URL with a host (got \"" + e.url.substr(0, 200) +
               "\")";
    if (e.secret.empty())
        return "secret is required (the receiver checks X-Leasehold-Signature with it)";
    if (e.secret.size() < 8 || e.secret.size() > 512)
        return "secret must be 8 to 512 bytes";
    for (const std::string &name : e.events) {
        if (!isWebhookEventName(name)) {
            std::string known;
            for (const WebhookEventName &n : webhookEventNames())
                known += (known.empty() ? "" : ", ") + std::string(n.name);
            return "events: unknown event \"" + name.substr(0, 64) + "\" (known: " + known + ")";
        }
    }
    if (e.format != "json" && e.format != "slack")
        return "format must be json or slack";
    return {};
}

std::string configuredWebhookId(const std::string &url)
{
    const QByteArray digest =
        QCryptographicHash::hash(QByteArray::fromStdString(url), QCryptographicHash::Sha256);
    return "config-" + digest.toHex().left(8).toStdString();
}

std::string newWebhookId()
{
    return "wh-" + QByteArray::number(QRandomGenerator::system()->generate() | 0x10000000u, 16)
                       .left(8)
                       .toStdString();
}

} // namespace leasehold
