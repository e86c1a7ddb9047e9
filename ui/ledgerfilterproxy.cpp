#include "ledgerfilterproxy.h"

#include "ledgermodel.h"

LedgerFilterProxy::LedgerFilterProxy(QObject *parent)
    : QSortFilterProxyModel(parent)
{} // its page sorts it by raw values (TablePage)

void LedgerFilterProxy::setAgent(const QString &text)
{
    m_agent = text.trimmed();
    invalidateRowsFilter();
}

void LedgerFilterProxy::setResource(const QString &text)
{
    m_resource = text.trimmed();
    invalidateRowsFilter();
}

void LedgerFilterProxy::setKind(const QString &text)
{
    m_kind = text.trimmed();
    invalidateRowsFilter();
}

bool LedgerFilterProxy::filterAcceptsRow(int sourceRow, const QModelIndex &sourceParent) const
{
    auto text = [&](int column) {
        return sourceModel()->index(sourceRow, column, sourceParent).data().toString();
    };
    if (!m_agent.isEmpty() && !text(LedgerModel::Agent).contains(m_agent, Qt::CaseInsensitive))
        return false;
    if (!m_kind.isEmpty() && text(LedgerModel::Kind) != m_kind)
        return false;
    if (!m_resource.isEmpty() &&
        !text(LedgerModel::Resource).contains(m_resource, Qt::CaseInsensitive))
        return false;
    return true;
}
