#include "texttable.h"

TextTable::TextTable(QStringList header)
    : m_header(std::move(header))
{}

void TextTable::add(QStringList row)
{
    while (row.size() < m_header.size())
        row << QString();
    m_rows.push_back(std::move(row));
}

QString TextTable::render() const
{
    std::vector<qsizetype> width(std::size_t(m_header.size()));
    auto measure = [&](const QStringList &row) {
        for (qsizetype c = 0; c < m_header.size(); ++c)
            width[std::size_t(c)] = std::max(width[std::size_t(c)], row[c].size());
    };
    measure(m_header);
    for (const QStringList &row : m_rows)
        measure(row);
    QString out;
    auto line = [&](const QStringList &row) {
        QString text;
        for (qsizetype c = 0; c < m_header.size(); ++c) {
            const bool last = c + 1 == m_header.size();
            text += last ? row[c] : row[c].leftJustified(width[std::size_t(c)] + 2);
        }
        out += text.trimmed() + QLatin1Char('\n');
    };
    line(m_header);
    for (const QStringList &row : m_rows)
        line(row);
    return out;
}

QString cellText(const nlohmann::json &value)
{
    if (value.is_string())
        return QString::fromStdString(value.get<std::string>());
    if (value.is_null())
        return {};
    return QString::fromStdString(value.dump());
}
