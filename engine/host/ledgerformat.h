#pragma once

#include "ledgerevent.h"

#include <QByteArray>

#include <vector>

namespace leasehold {

// The ledger as files: JSON Lines (one event per line, as GET /ledger shows each) and CSV
// (RFC 4180, CRLF line ends, a header row first when `header` is true). Shared by the REST
// export route and the console's export action.
QByteArray ledgerJsonLines(const std::vector<LedgerEvent> &events);
QByteArray ledgerCsv(const std::vector<LedgerEvent> &events, bool header = true);

} // namespace leasehold
