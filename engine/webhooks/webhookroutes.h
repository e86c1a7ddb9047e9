#pragma once

namespace leasehold {

class EngineHost;
class HttpFront;
class Webhooks;

// The admin routes of the webhooks (docs/protocol.md, "Webhooks"), under
// /api/v1/acp/coordination/admin/webhooks: list (GET; also what `ctl doctor` reads), add
// (POST {url, secret, events?, format?}), remove ({id}) and test ({id}). Each parses its input
// on the engine thread, does its work on the delivery thread and answers back on the engine
// thread. Secrets are taken, never shown back ("secret": "set"). Without `webhooks` (a standby
// of a cluster) they answer 503 webhooks_unavailable.
//
// Thread: the engine thread.
void addWebhookRoutes(HttpFront &front, EngineHost &host, Webhooks *webhooks);

} // namespace leasehold
