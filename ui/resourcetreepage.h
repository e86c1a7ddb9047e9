#pragma once

#include "resourcetree.h"

#include "statepage.h"

#include <map>

class ConsoleState;
class QLabel;
class QTreeWidget;
class QTreeWidgetItem;

// The console's resource tree: where is the fight? Schemes, folders and resources that are
// held, waited for, wanted or refused in the last minute, each row counting its subtree, shaded
// by how contended it is. Only open rows have their children's rows made, so a folder of
// thousands costs one row until it is opened. Rows are updated in place, so what the operator
// expanded or selected stays so; selecting a row asks for Holders, Queue and Ledger to show that
// subtree (resourceSelected). The tree is worked out only while the page is visible.
//
// Thread: the UI thread.
class ResourceTreePage : public StatePage
{
    Q_OBJECT

public:
    enum Column { Resource, Held, Parked, Wants, Refused, Holders, ColumnCount };

    explicit ResourceTreePage(QWidget *parent = nullptr);

    // A scheme or first folder with more children than this starts closed.
    static constexpr int kOpenChildren = 200;

    const ResourceTree &tree() const { return m_tree; }
    QTreeWidget *view() const { return m_view; }
    QTreeWidgetItem *item(const QString &path) const;

signals:
    // A row was selected: its path ("fs:src"); empty when the selection was cleared.
    void resourceSelected(const QString &path);

protected:
    void changeEvent(QEvent *event) override;

private:
    void refresh(const ConsoleState &state) override;
    // Makes the rows match the tree: one per node whose parents are all open.
    void syncItems();
    void fill(QTreeWidgetItem *item, const ResourceTree::Node &node) const;

    ResourceTree m_tree;
    QLabel *m_summary;
    QTreeWidget *m_view;
    std::map<QString, QTreeWidgetItem *> m_items; // by path
};
