#pragma once

#include <QWidget>

class QAbstractItemModel;
class QHBoxLayout;
class QLabel;
class QLineEdit;
class QSortFilterProxyModel;
class QTableView;

// One console view: a filter box over a sortable table. Rows are sorted by their raw values
// (numbers as numbers) and the filter matches any column. A view that needs its own filter
// fields passes its proxy and adds widgets to the bar; the text box stays unless it says
// OwnFiltersOnly (the proxy then decides alone).
//
// Thread: the UI thread.
class TablePage : public QWidget
{
    Q_OBJECT

public:
    enum Filters { TextFilter, OwnFiltersOnly };

    TablePage(const QString &name, QAbstractItemModel *model,
              QSortFilterProxyModel *proxy = nullptr, QWidget *parent = nullptr,
              Filters filters = TextFilter);

    QTableView *view() const { return m_view; }
    QSortFilterProxyModel *proxy() const { return m_proxy; }
    QLineEdit *filterEdit() const { return m_filter; }
    QHBoxLayout *bar() const { return m_bar; }
    QString name() const { return m_name; }

    // The value in `column` of each selected row (source model order), or of the current row.
    QStringList selectedValues(int column) const;

private:
    void updateCount();

    QString m_name;
    QAbstractItemModel *m_model;
    QSortFilterProxyModel *m_proxy;
    QTableView *m_view;
    QLineEdit *m_filter;
    QLabel *m_count;
    QHBoxLayout *m_bar;
    bool m_sized = false;
};
