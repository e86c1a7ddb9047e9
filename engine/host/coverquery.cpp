#include "coverquery.h"

#include <variant>

using namespace leasehold;

namespace {

// Parsed lease names kept at most; a console with more distinct names live re-parses.
constexpr qsizetype kMaxCachedNames = 50'000;

} // namespace

CoverQuery::CoverQuery(const QString &text)
{
    const QString trimmed = text.trimmed();
    m_empty = trimmed.isEmpty();
    if (m_empty)
        return;
    ParsedName parsed = m_parser.parse(ResourceParser::literalPath(trimmed.toStdString()));
    if (const auto *error = std::get_if<NameError>(&parsed))
        m_problem = QString::fromStdString(error->message);
    else
        m_path = std::get<ResourceName>(std::move(parsed));
}

bool CoverQuery::coveredBy(const QString &leaseName) const
{
    if (m_empty)
        return true;
    if (!m_path)
        return false;
    auto it = m_names.constFind(leaseName);
    if (it == m_names.constEnd()) {
        if (m_names.size() >= kMaxCachedNames)
            m_names.clear();
        ParsedName parsed = m_parser.parse(leaseName.toStdString());
        std::optional<ResourceName> name;
        if (auto *ok = std::get_if<ResourceName>(&parsed))
            name = std::move(*ok);
        it = m_names.insert(leaseName, std::move(name));
    }
    return it->has_value() && (*it)->covers(*m_path);
}
