#include "toolpolicy.h"

QStringList ToolPolicy::defaultPatterns()
{
    return {
        QStringLiteral("write*"),  QStringLiteral("edit*"),   QStringLiteral("move*"),
        QStringLiteral("delete*"), QStringLiteral("patch*"),  QStringLiteral("create_directory"),
        QStringLiteral("rename*"), QStringLiteral("remove*"), QStringLiteral("apply_patch*")};
}

QStringList ToolPolicy::defaultPathParams()
{
    return {QStringLiteral("path"), QStringLiteral("paths"), QStringLiteral("source"),
            QStringLiteral("destination"), QStringLiteral("file_path")};
}

ToolPolicy::ToolPolicy(QStringList patterns, QHash<QString, QStringList> pathParams)
    : m_pathParams(std::move(pathParams))
{
    if (patterns.isEmpty())
        patterns = defaultPatterns();
    for (const QString &p : patterns)
        m_patterns.emplace_back(QRegularExpression::wildcardToRegularExpression(p.trimmed()));
}

bool ToolPolicy::enforced(const QString &tool) const
{
    for (const QRegularExpression &re : m_patterns)
        if (re.match(tool).hasMatch())
            return true;
    return false;
}

QStringList ToolPolicy::paths(const QString &tool, const nlohmann::json &arguments) const
{
    QStringList out;
    if (!arguments.is_object())
        return out;
    const QStringList params = m_pathParams.value(tool, defaultPathParams());
    for (const QString &param : params) {
        const std::string key = param.toStdString();
        if (!arguments.contains(key))
            continue;
        const nlohmann::json &v = arguments[key];
        if (v.is_string())
            out << QString::fromStdString(v.get<std::string>());
        else if (v.is_array())
            for (const nlohmann::json &item : v)
                if (item.is_string())
                    out << QString::fromStdString(item.get<std::string>());
    }
    return out;
}

bool ToolPolicy::parsePathParams(const QString &value, QHash<QString, QStringList> *into)
{
    const qsizetype eq = value.indexOf(QLatin1Char('='));
    if (eq <= 0 || eq == value.size() - 1)
        return false;
    QStringList params;
    for (const QString &p : value.mid(eq + 1).split(QLatin1Char(','), Qt::SkipEmptyParts))
        params << p.trimmed();
    if (params.isEmpty())
        return false;
    (*into)[value.left(eq).trimmed()] = params;
    return true;
}
