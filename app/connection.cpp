#include "connection.h"

#include "configfile.h"
#include "did.h"
#include "keystore.h"

#include <QCommandLineParser>
#include <QDir>
#include <QStandardPaths>

using namespace leasehold;

namespace {

bool defines(const QCommandLineParser &parser, const char *flag)
{
    // QCommandLineParser::isSet warns about options it does not know; ask it about set ones.
    return parser.optionNames().contains(QLatin1String(flag));
}

QString readAdminKey(const QString &dataDir)
{
    QString error;
    const auto entries =
        KeyStore::readKeysFile(QDir(dataDir).filePath(QStringLiteral("keys.json")), &error);
    for (const KeyFileEntry &e : entries.value_or(std::vector<KeyFileEntry>{})) {
        if (e.identity.role == Role::Admin)
            return QString::fromLatin1(e.key);
    }
    return {};
}

} // namespace

std::optional<Connection> Connection::resolve(const QCommandLineParser &parser, Sources sources,
                                              QString *error)
{
    AppOptions config;
    if (defines(parser, "config") && !readConfig(parser.value("config"), config, error))
        return std::nullopt;
    Connection c;
    QString url = defines(parser, "url") ? parser.value("url") : QString();
    if (url.isEmpty())
        url = qEnvironmentVariable("LEASEHOLD_URL");
    if (url.isEmpty())
        url = QStringLiteral("http://%1:%2").arg(config.bind).arg(config.port);
    c.url = QUrl(url);
    if (!c.url.isValid() ||
        (c.url.scheme() != QLatin1String("http") && c.url.scheme() != QLatin1String("https"))) {
        *error = QStringLiteral("--url must be an http:// URL (got %1)").arg(url);
        return std::nullopt;
    }
    QString key = defines(parser, "key") ? parser.value("key") : QString();
    if (key.isEmpty())
        key = qEnvironmentVariable("LEASEHOLD_KEY");
    c.agent = sources.agentFlag && defines(parser, "agent") ? parser.value("agent") : QString();
    if (c.agent.isEmpty() && sources.agentFlag)
        c.agent = qEnvironmentVariable("LEASEHOLD_AGENT");
    if (!c.agent.isEmpty()) {
        if (const std::string problem = didProblem(c.agent.toStdString()); !problem.empty()) {
            *error = QStringLiteral("--agent %1").arg(QString::fromStdString(problem));
            return std::nullopt;
        }
    }
    // A named agent is who to be; otherwise, for ctl and a person's git guard, the operator.
    if (key.isEmpty() && sources.adminFallback && c.agent.isEmpty()) {
        QString dir = defines(parser, "data-dir") ? parser.value("data-dir") : QString();
        if (dir.isEmpty())
            dir = config.dataDir;
        if (dir.isEmpty())
            dir = QStandardPaths::writableLocation(QStandardPaths::AppDataLocation);
        key = readAdminKey(dir);
    }
    c.key = key.toUtf8();
    if (defines(parser, "timeout") && parser.isSet("timeout")) {
        bool ok = false;
        const int seconds = parser.value("timeout").toInt(&ok);
        if (!ok || seconds <= 0) {
            *error = QStringLiteral("--timeout must be a whole number of seconds");
            return std::nullopt;
        }
        c.timeoutMs = seconds * 1000;
    }
    return c;
}
