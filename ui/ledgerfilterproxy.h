#pragma once

#include <QSortFilterProxyModel>

// The ledger view's filter: by agent (exact or part of a DID), by resource (that resource and
// everything below it, or part of a name), and by kind (its short name). Empty fields match all.
//
// Thread: the UI thread.
class LedgerFilterProxy : public QSortFilterProxyModel
{
    Q_OBJECT

public:
    explicit LedgerFilterProxy(QObject *parent = nullptr);

    void setAgent(const QString &text);
    void setResource(const QString &text);
    void setKind(const QString &text);

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex &sourceParent) const override;

private:
    QString m_agent, m_resource, m_kind;
};
