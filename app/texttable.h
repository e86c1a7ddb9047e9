#pragma once

#include <QString>
#include <QStringList>

#include <nlohmann/json.hpp>

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

// A JSON value as a table cell: a string as itself, null as nothing, anything else as JSON.
QString cellText(const nlohmann::json &value);
