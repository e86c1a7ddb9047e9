#pragma once

// A ledger event as JSON: what GET /ledger, the export and `ctl ledger --json` show.

#include "ledgerevent.h"

#include <nlohmann/json.hpp>

namespace leasehold {

nlohmann::json toJson(const LedgerEvent &event);

} // namespace leasehold
