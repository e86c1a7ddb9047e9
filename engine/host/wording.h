#pragma once

#include <QString>

namespace leasehold {

// "1 lease", "3 leases": counts in messages an operator reads (no translation catalogue
// ships, so Qt's "%n" plural forms would show "lease(s)").
inline QString countOf(qint64 n, const char *one, const char *many)
{
    return QStringLiteral("%1 %2").arg(n).arg(QLatin1String(n == 1 ? one : many));
}

} // namespace leasehold
