#include "ledgerjson.h"

namespace leasehold {

using nlohmann::json;

json toJson(const LedgerEvent &e)
{
    json j = {{"seq", e.seq},
              {"at", e.at},
              {"kind", eventKindName(e.kind)},
              {"actorDid", e.actorDid},
              {"resource", e.resource.empty() ? json(nullptr) : json(e.resource)},
              {"leaseId", e.leaseId.empty() ? json(nullptr) : json(e.leaseId)},
              {"token", e.token == 0 ? json(nullptr) : json(e.token)},
              {"reason", e.reason.empty() ? json(nullptr) : json(e.reason)},
              {"detail", e.detail}};
    if (e.ttlMs > 0)
        j["ttlMs"] = e.ttlMs;
    return j;
}

} // namespace leasehold
