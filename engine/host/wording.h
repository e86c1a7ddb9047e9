#pragma once

// How values read in English, in one place for every surface: the console, `ctl`, REST and MCP
// messages. (No translation catalogue ships, so Qt's "%n" plural forms would show "lease(s)".)

#include "ledgerevent.h"

#include <QString>

#include <cstdint>
#include <vector>

namespace leasehold {

// "1 lease", "3 leases".
inline QString countOf(qint64 n, const char *one, const char *many)
{
    return QStringLiteral("%1 %2").arg(n).arg(QLatin1String(n == 1 ? one : many));
}

// The one duration formatter: "340 ms", "12 s", "4 min 5 s", "2 min", "3 h 10 min". Whole
// units are truncated, never rounded up, so "expires in 4 s" is never late.
QString formatDuration(std::int64_t ms);

// A wait cycle as a path that returns to its start:
// "did:agent:a → src/x → did:agent:b → src/y → did:agent:a".
QString cyclePath(const std::vector<CycleStep> &cycle);

// An event's facts in a few words ("holder did:agent:b", "released 3 of did:agent:x", ...),
// for the console's ledger view, `ctl ledger` and the CSV export's summary column.
QString eventSummary(const LedgerEvent &e);

} // namespace leasehold
