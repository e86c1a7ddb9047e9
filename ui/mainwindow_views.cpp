// MainWindow: its views by name — the table pages and their models, the navigation list that
// shows one — and the engine's time as the console last heard it. The other parts of the window
// (layout and frames, levers, navigation between views) find pages here.

#include "mainwindow.h"

#include "consoleframe.h"
#include "snapshottablemodel.h"
#include "tablepage.h"

#include <QListWidget>
#include <QStackedWidget>

using namespace leasehold;

TablePage *MainWindow::addTable(const QString &name, std::vector<TableColumn> columns,
                                RowBuilder rows, RowCount count, QSortFilterProxyModel *proxy)
{
    auto *model = new SnapshotTableModel(std::move(columns), this);
    auto *page = new TablePage(name, model, proxy, m_stack);
    m_stack->addWidget(page);
    m_tables.push_back({model, page, rows, addNavItem(name), count});
    return page;
}

QList<TablePage *> MainWindow::pages() const
{
    QList<TablePage *> all;
    for (const Table &t : m_tables)
        all << t.page;
    return all << m_ledgerPage;
}

QListWidgetItem *MainWindow::addNavItem(const QString &name)
{
    auto *item = new QListWidgetItem(name, m_nav);
    item->setData(Qt::UserRole, name);
    return item;
}

void MainWindow::showView(const QString &name)
{
    for (int i = 0; i < m_nav->count(); ++i) {
        if (m_nav->item(i)->data(Qt::UserRole).toString() == name)
            m_nav->setCurrentRow(i);
    }
}

TablePage *MainWindow::page(const QString &name) const
{
    for (TablePage *p : pages()) {
        if (p->name() == name)
            return p;
    }
    return nullptr;
}

SnapshotTableModel *MainWindow::model(const QString &name) const
{
    for (const Table &t : m_tables) {
        if (t.page->name() == name)
            return t.model;
    }
    return nullptr;
}

std::int64_t MainWindow::engineNow() const
{
    const ConsoleFrame *f = m_state.frame();
    return f ? f->snapshot.at + (m_sinceFrame.isValid() ? m_sinceFrame.elapsed() : 0) : 0;
}
