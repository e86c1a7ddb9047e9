#pragma once

#include <QHash>
#include <QRegularExpression>
#include <QString>
#include <QStringList>

#include <nlohmann/json.hpp>

#include <vector>

// Which of an inner MCP server's tools change files, and which of their arguments are paths:
// glob patterns on tool names (`*` any run of characters, `?` one), and parameter names per
// tool. The defaults cover the official filesystem server's mutating tools (write_file,
// edit_file, create_directory, move_file) and the usual names of others'.
class ToolPolicy
{
public:
    static QStringList defaultPatterns();
    static QStringList defaultPathParams();

    // `patterns` empty: the defaults. `pathParams`: TOOL -> parameter names, replacing the
    // defaults for that tool.
    explicit ToolPolicy(QStringList patterns = {}, QHash<QString, QStringList> pathParams = {});

    bool enforced(const QString &tool) const;
    // Every path the call names: each path parameter's string, or each string of its array.
    QStringList paths(const QString &tool, const nlohmann::json &arguments) const;

    // Parses one --path-params value, "TOOL=P1,P2"; false when it is not of that shape.
    static bool parsePathParams(const QString &value, QHash<QString, QStringList> *into);

private:
    std::vector<QRegularExpression> m_patterns;
    QHash<QString, QStringList> m_pathParams;
};
