#pragma once

#include "resourcename.h"

#include <QHash>
#include <QString>

#include <optional>

// "What covers this path?": given a file path or a resource name, asked literally (a file
// called `a*b.ts` is that one file), tells which lease names cover it: the name itself, a folder
// above it, or a pattern that matches it or a folder above it (ResourceName::covers). The
// console's Holders filter and `leasehold ctl holders --covers` ask it of every lease.
//
// Thread: one thread at a time (it caches the names it has parsed).
class CoverQuery
{
public:
    // `text` as an operator types it: "src/app.cpp", "fs:src/app.cpp", "lock:deploy/prod".
    // Empty: every name passes.
    explicit CoverQuery(const QString &text = {});

    bool isEmpty() const { return m_empty; }
    // Why `text` names nothing ("path escapes the workspace root"), else empty.
    const QString &problem() const { return m_problem; }
    // True when a lease on `leaseName` (canonical text, plain or pattern) covers the path.
    bool coveredBy(const QString &leaseName) const;

private:
    leasehold::ResourceParser m_parser;
    std::optional<leasehold::ResourceName> m_path;
    QString m_problem;
    bool m_empty = true;
    mutable QHash<QString, std::optional<leasehold::ResourceName>> m_names;
};
