#include "workspacepaths.h"

#include "resourcename.h"

#include <QDir>
#include <QFileInfo>
#include <QUrl>

namespace {

// The canonical form of `path`, which need not exist: its nearest existing ancestor resolved,
// the rest appended and cleaned.
QString resolve(const QString &path)
{
    QString existing = QDir::cleanPath(path);
    QStringList rest;
    while (!QFileInfo::exists(existing)) {
        const int slash = existing.lastIndexOf(QLatin1Char('/'));
        if (slash <= 0)
            return QDir::cleanPath(path);
        rest.prepend(existing.mid(slash + 1));
        existing.truncate(slash);
    }
    QString canonical = QFileInfo(existing).canonicalFilePath();
    if (canonical.isEmpty())
        canonical = existing;
    for (const QString &part : rest)
        canonical += QLatin1Char('/') + part;
    return QDir::cleanPath(canonical);
}

} // namespace

WorkspacePaths::WorkspacePaths(const QString &root)
    : m_root(resolve(QDir(root).absolutePath()))
{}

WorkspacePaths::Named WorkspacePaths::name(const QString &path) const
{
    if (path.trimmed().isEmpty() || path.contains(QChar(0)))
        return {{}, QStringLiteral("not a path")};
    QString text = path;
    if (text.startsWith(QLatin1String("file://")))
        text = QUrl(text).toLocalFile();
    else if (text.startsWith(QLatin1String("~/")))
        text = QDir::homePath() + text.mid(1);
    const QString absolute = QDir::isAbsolutePath(text) ? text : m_root + QLatin1Char('/') + text;
    const QString resolved = resolve(absolute);
    if (resolved == m_root)
        return {QStringLiteral("fs:."), {}};
    if (!resolved.startsWith(m_root + QLatin1Char('/')) && m_root != QLatin1String("/"))
        return {{}, QStringLiteral("%1 is outside the root %2").arg(path, m_root)};
    // A file called `a*b.ts` is named `fs:a\*b.ts`, never read as a pattern.
    const QString below = resolved.mid(m_root == QLatin1String("/") ? 1 : m_root.size() + 1);
    return {QStringLiteral("fs:") +
                QString::fromStdString(leasehold::ResourceParser::literalPath(below.toStdString())),
            {}};
}
