#pragma once

// A ledger event as JSON: what GET /ledger, the export and `ctl ledger --json` show. The
// common fields always; each kind's facts as their own typed fields, only when they are set.

#include "ledgerevent.h"

#include <nlohmann/json.hpp>

#include <optional>

namespace leasehold {

nlohmann::json toJson(const LedgerEvent &event);
// The event `j` describes (what `ctl ledger` reads back from the service), or nothing when it
// is not one.
std::optional<LedgerEvent> ledgerEventFromJson(const nlohmann::json &j);

} // namespace leasehold
