#include "coverfilterproxy.h"

CoverFilterProxy::CoverFilterProxy(int resourceColumn, QObject *parent)
    : QSortFilterProxyModel(parent)
    , m_column(resourceColumn)
{}

void CoverFilterProxy::setPath(const QString &text)
{
    m_query = CoverQuery(text);
    invalidateRowsFilter();
    emit problemChanged(m_query.problem());
}

bool CoverFilterProxy::filterAcceptsRow(int sourceRow, const QModelIndex &sourceParent) const
{
    if (!QSortFilterProxyModel::filterAcceptsRow(sourceRow, sourceParent))
        return false;
    if (m_query.isEmpty())
        return true;
    return m_query.coveredBy(
        sourceModel()->index(sourceRow, m_column, sourceParent).data().toString());
}
