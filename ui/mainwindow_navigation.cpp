// Where a pick in one view leads in the others: a resource picked in the tree narrows the
// tables to it; a lease picked on the timeline is selected in Holders, or shown in the Ledger
// once it ended.
#include "mainwindow.h"
#include "snapshottablemodel.h"
#include "tablepage.h"
#include "timelinepage.h"

#include <QItemSelectionModel>
#include <QLineEdit>
#include <QSortFilterProxyModel>
#include <QStatusBar>
#include <QTableView>

void MainWindow::filterToResource(const QString &path)
{
    QList<QLineEdit *> filters = {page(tr("Holders"))->filterEdit(),
                                  page(tr("Queue"))->filterEdit(), m_ledgerResource,
                                  m_timeline->filterEdit()};
    for (QLineEdit *filter : filters) {
        // A filter the operator typed since is theirs: left alone.
        if (filter->text().isEmpty() || filter->text() == m_treeFilter)
            filter->setText(path);
    }
    m_treeFilter = path;
    if (!path.isEmpty())
        statusBar()->showMessage(
            tr("Holders, Queue, Timeline and Ledger show %1 and what lies below it").arg(path),
            8000);
}

void MainWindow::showLease(const QString &leaseId, const QString &resource, bool live)
{
    TablePage *holders = page(tr("Holders"));
    SnapshotTableModel *model = this->model(tr("Holders"));
    const QModelIndexList found =
        live ? model->match(model->index(0, 0), SnapshotTableModel::KeyRole, leaseId, 1,
                            Qt::MatchExactly)
             : QModelIndexList();
    if (found.isEmpty()) {
        // Ended (or ended since the frame drew it): its story is in the ledger.
        showView(tr("Ledger"));
        m_ledgerResource->setText(resource);
        statusBar()->showMessage(
            tr("Lease %1 has ended: the Ledger shows %2").arg(leaseId, resource), 8000);
        return;
    }
    showView(tr("Holders"));
    QModelIndex row = holders->proxy()->mapFromSource(found.front());
    if (!row.isValid()) {
        // A filter hides it: the operator asked for this lease, so the filter gives way.
        holders->filterEdit()->clear();
        if (auto *covers = holders->findChild<QLineEdit *>(QStringLiteral("coversFilter")))
            covers->clear();
        row = holders->proxy()->mapFromSource(found.front());
    }
    holders->view()->selectionModel()->setCurrentIndex(row, QItemSelectionModel::ClearAndSelect |
                                                                QItemSelectionModel::Rows);
    holders->view()->scrollTo(row);
}
