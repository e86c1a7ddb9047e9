#pragma once

#include <QString>
#include <QStringList>

#include <vector>

// A plain-text table for terminals: a header row and left-aligned columns separated by two
// spaces, as `kubectl get` or `etcdctl -w table` print them (without borders, so grep and awk
// work on the output).
class TextTable
{
public:
    explicit TextTable(QStringList header);
    void add(QStringList row);
    bool empty() const { return m_rows.empty(); }
    QString render() const;

private:
    QStringList m_header;
    std::vector<QStringList> m_rows;
};
