#pragma once

#include "coverquery.h"

#include <QSortFilterProxyModel>

// The Holders view's "what covers this path?" filter: given a path or name, only the leases
// whose name covers it (the name, a folder above it, a pattern matching it or a folder above
// it; CoverQuery). The page's text filter applies as well.
//
// Thread: the UI thread.
class CoverFilterProxy : public QSortFilterProxyModel
{
    Q_OBJECT

public:
    CoverFilterProxy(int resourceColumn, QObject *parent = nullptr);

    void setPath(const QString &text);
    // Why the path names nothing, else empty.
    QString problem() const { return m_query.problem(); }

signals:
    void problemChanged(const QString &problem);

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex &sourceParent) const override;

private:
    int m_column;
    CoverQuery m_query;
};
