#include "configfile.h"

#include "webhookevents.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

namespace {

// What is wrong with `value` as a whole number in [min, max], or nothing; sets `out`.
QString wholeNumber(const QJsonValue &value, qint64 min, qint64 max, qint64 &out)
{
    const QString range = QStringLiteral("must be a whole number from %1 to %2").arg(min).arg(max);
    if (!value.isDouble())
        return range;
    const double d = value.toDouble();
    if (!std::isfinite(d) || d != std::floor(d) || d < double(min) || d > double(max))
        return range + QStringLiteral(" (got %1)").arg(d, 0, 'g', 17);
    out = qint64(d);
    return {};
}

struct Setting
{
    const char *key;
    // Applies `value`; returns what is wrong with it, or an empty string.
    std::function<QString(const QJsonValue &value, AppOptions &o)> apply;
};

template<class T> Setting number(const char *key, T AppOptions::*field, qint64 min, qint64 max)
{
    return {key, [field, min, max](const QJsonValue &v, AppOptions &o) {
                qint64 n = 0;
                QString problem = wholeNumber(v, min, max, n);
                if (problem.isEmpty())
                    o.*field = static_cast<T>(n);
                return problem;
            }};
}

Setting text(const char *key, QString AppOptions::*field)
{
    return {key, [field](const QJsonValue &v, AppOptions &o) {
                if (!v.isString())
                    return QStringLiteral("must be a string");
                o.*field = v.toString();
                return QString();
            }};
}

Setting flag(const char *key, bool AppOptions::*field)
{
    return {key, [field](const QJsonValue &v, AppOptions &o) {
                if (!v.isBool())
                    return QStringLiteral("must be true or false");
                o.*field = v.toBool();
                return QString();
            }};
}

Setting texts(const char *key, QStringList AppOptions::*field)
{
    return {key, [field](const QJsonValue &v, AppOptions &o) {
                const QString must = QStringLiteral("must be an array of strings");
                if (!v.isArray())
                    return must;
                QStringList list;
                for (const QJsonValue &item : v.toArray()) {
                    if (!item.isString())
                        return must;
                    list << item.toString();
                }
                o.*field = list;
                return QString();
            }};
}

// "webhooks.endpoints": [{url, secret, events?, format?}], each checked as `ctl webhooks add`
// checks it, so a typo in a URL is an error at start and not a silent loss at 3 a.m.
Setting webhookEndpoints(const char *key)
{
    return {key, [](const QJsonValue &v, AppOptions &o) {
                if (!v.isArray())
                    return QStringLiteral("must be an array of {url, secret, events?, format?}");
                std::vector<WebhookSetting> all;
                int index = 0;
                for (const QJsonValue &item : v.toArray()) {
                    const QString at = QStringLiteral("[%1]: ").arg(index++);
                    if (!item.isObject())
                        return at + QStringLiteral("must be an object {url, secret, events?, "
                                                   "format?}");
                    const QJsonObject object = item.toObject();
                    for (auto it = object.begin(); it != object.end(); ++it)
                        if (!QStringList{"url", "secret", "events", "format"}.contains(it.key()))
                            return at + QStringLiteral("unknown field \"%1\"").arg(it.key());
                    WebhookSetting w;
                    leasehold::WebhookEndpoint e;
                    w.url = object.value(QStringLiteral("url")).toString();
                    w.secret = object.value(QStringLiteral("secret")).toString();
                    w.format = object.value(QStringLiteral("format")).toString(w.format);
                    const QJsonValue events = object.value(QStringLiteral("events"));
                    if (!events.isUndefined() && !events.isArray())
                        return at + QStringLiteral("events must be an array of event names");
                    for (const QJsonValue &name : events.toArray())
                        if (name.toString() != QLatin1String("all"))
                            w.events << name.toString();
                    e.url = w.url.toStdString();
                    e.secret = w.secret.toStdString();
                    e.format = w.format.toStdString();
                    for (const QString &name : w.events)
                        e.events.push_back(name.toStdString());
                    if (const std::string problem = leasehold::checkWebhookEndpoint(e);
                        !problem.empty())
                        return at + QString::fromStdString(problem);
                    all.push_back(w);
                }
                o.webhooks = all;
                return QString();
            }};
}

const std::vector<Setting> &settings()
{
    static const std::vector<Setting> all = {
        number("port", &AppOptions::port, 0, 65535),
        text("bind", &AppOptions::bind),
        flag("open", &AppOptions::open),
        text("keys", &AppOptions::keysFile),
        text("workspace", &AppOptions::workspace),
        text("dataDir", &AppOptions::dataDir),
        flag("inMemory", &AppOptions::inMemory),
        texts("exclusive", &AppOptions::exclusive),
        texts("allowedHosts", &AppOptions::allowedHosts),
        number("liveWindowSeconds", &AppOptions::liveWindowSeconds, 5, 86'400),
        number("mcpProgressMs", &AppOptions::mcpProgressMs, 100, 600'000),
        number("ledgerRetainRows", &AppOptions::ledgerRetainRows, 1000, qint64(1) << 40),
        number("ledgerRetainDays", &AppOptions::ledgerRetainDays, 1, 36'500),
        number("minFreeDiskMegabytes", &AppOptions::minFreeDiskMegabytes, 0, 1 << 30),
        number("maxConnections", &AppOptions::maxConnections, 0, 1'000'000),
        number("headTimeoutMs", &AppOptions::headTimeoutMs, 100, 600'000),
        number("parkAfterMs", &AppOptions::parkAfterMs, 100, 3'600'000),
        number("storeTimeoutMs", &AppOptions::storeTimeoutMs, 100, 600'000),
        number("commitWindowUs", &AppOptions::commitWindowUs, 0, 100'000),
        number("lockDelayMs", &AppOptions::lockDelayMs, 0, 60'000),
        number("workspaceLockDelayMs", &AppOptions::workspaceLockDelayMs, 0, 60'000),
        // Webhooks (docs/webhooks.md).
        webhookEndpoints("webhooks.endpoints"),
        number("webhooks.retryForMs", &AppOptions::webhookRetryForMs, 1'000,
               7LL * 24 * 3600 * 1000),
        number("webhooks.firstRetryMs", &AppOptions::webhookFirstRetryMs, 10, 3'600'000),
        number("webhooks.maxRetryMs", &AppOptions::webhookMaxRetryMs, 10, 3'600'000),
        number("webhooks.timeoutMs", &AppOptions::webhookTimeoutMs, 100, 120'000),
        number("webhooks.hotRefusalsPerMinute", &AppOptions::hotRefusalsPerMinute, 1, 1'000'000),
        // Cluster mode (docs/cluster.md); the URLs are checked with the flags' own.
        texts("etcd.endpoints", &AppOptions::etcd),
        text("etcd.prefix", &AppOptions::etcdPrefix),
        number("etcd.sessionTtlSeconds", &AppOptions::sessionTtlSeconds, 2, 600),
        text("etcd.caFile", &AppOptions::etcdCaFile),
        text("etcd.certFile", &AppOptions::etcdCertFile),
        text("etcd.keyFile", &AppOptions::etcdKeyFile),
        text("advertise", &AppOptions::advertise),
    };
    return all;
}

// Applies `object`'s settings, each named `prefix` + its key (a group such as "etcd" holds
// "etcd.endpoints" and the like); false with `error` at the first that is wrong.
bool applyObject(const QJsonObject &object, const QString &prefix, AppOptions &o, QString *error)
{
    const auto &all = settings();
    for (auto it = object.begin(); it != object.end(); ++it) {
        const QString key = prefix + it.key();
        const auto setting = std::find_if(all.begin(), all.end(), [&key](const Setting &s) {
            return key == QLatin1String(s.key);
        });
        if (setting == all.end()) {
            const QString group = key + QLatin1Char('.');
            const bool isGroup = std::any_of(all.begin(), all.end(), [&group](const Setting &s) {
                return QLatin1String(s.key).startsWith(group);
            });
            if (!isGroup) {
                *error = QStringLiteral("unknown setting \"%1\"").arg(key);
                return false;
            }
            if (!it.value().isObject()) {
                *error = QStringLiteral("\"%1\" must be an object of settings").arg(key);
                return false;
            }
            if (!applyObject(it.value().toObject(), group, o, error))
                return false;
            continue;
        }
        if (const QString problem = setting->apply(it.value(), o); !problem.isEmpty()) {
            *error = QStringLiteral("\"%1\" %2").arg(key, problem);
            return false;
        }
    }
    return true;
}

} // namespace

bool applyConfig(const QByteArray &json, AppOptions &options, QString *error)
{
    QJsonParseError parseError;
    const QJsonDocument doc = QJsonDocument::fromJson(json, &parseError);
    if (parseError.error != QJsonParseError::NoError) {
        *error = QStringLiteral("not JSON (%1 at byte %2)")
                     .arg(parseError.errorString())
                     .arg(parseError.offset);
        return false;
    }
    if (!doc.isObject()) {
        *error = QStringLiteral("must be a JSON object of settings");
        return false;
    }
    AppOptions changed = options;
    if (!applyObject(doc.object(), QString(), changed, error))
        return false;
    options = changed;
    return true;
}

bool readConfig(const QString &path, AppOptions &options, QString *error)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        *error = QStringLiteral("--config %1: %2").arg(path, file.errorString());
        return false;
    }
    QString problem;
    if (!applyConfig(file.readAll(), options, &problem)) {
        *error = QStringLiteral("--config %1: %2").arg(path, problem);
        return false;
    }
    return true;
}
