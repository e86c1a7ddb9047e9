#include "serviceclient.h"

#include <QEventLoop>
#include <QNetworkReply>
#include <QUrlQuery>

QString ServiceClient::Reply::explanation() const
{
    for (const char *field : {"message", "error"})
        if (body.is_object() && body.contains(field) && body[field].is_string())
            return QString::fromStdString(body[field].get<std::string>());
    return reached() ? QStringLiteral("HTTP %1").arg(status) : networkError;
}

ServiceClient::ServiceClient(Settings settings)
    : m_settings(std::move(settings))
{}

QNetworkRequest ServiceClient::request(const Settings &settings, const QString &path,
                                       const QList<QPair<QString, QString>> &query)
{
    QUrl url = settings.base;
    const QString basePath = url.path();
    url.setPath(basePath.chopped(basePath.endsWith(QLatin1Char('/')) ? 1 : 0) + path);
    if (!query.isEmpty()) {
        QUrlQuery q;
        q.setQueryItems(query);
        url.setQuery(q);
    }
    QNetworkRequest r(url);
    r.setTransferTimeout(settings.timeoutMs);
    r.setHeader(QNetworkRequest::ContentTypeHeader, QByteArrayLiteral("application/json"));
    if (!settings.key.isEmpty())
        r.setRawHeader("Authorization", "Bearer " + settings.key);
    else if (!settings.agent.isEmpty())
        r.setRawHeader("X-Agent-Id", settings.agent.toUtf8());
    if (!settings.via.isEmpty())
        r.setRawHeader("X-Leasehold-Via", settings.via);
    return r;
}

QByteArray ServiceClient::payload(nlohmann::json body) const
{
    // Without a key an --open instance learns the agent from the body.
    if (m_settings.key.isEmpty() && !m_settings.agent.isEmpty() && body.is_object() &&
        !body.contains("actorDid"))
        body["actorDid"] = m_settings.agent.toStdString();
    return QByteArray::fromStdString(body.dump());
}

void ServiceClient::post(const QString &path, nlohmann::json body, Done done)
{
    deliver(m_net.post(request(path), payload(std::move(body))), std::move(done));
}

void ServiceClient::get(const QString &path, const QList<QPair<QString, QString>> &query, Done done)
{
    deliver(m_net.get(request(path, query)), std::move(done));
}

void ServiceClient::deliver(QNetworkReply *reply, Done done)
{
    QObject::connect(reply, &QNetworkReply::finished, reply, [reply, done = std::move(done)] {
        done(read(reply));
        reply->deleteLater();
    });
}

ServiceClient::Reply ServiceClient::postNow(const QString &path, nlohmann::json body)
{
    return wait(m_net.post(request(path), payload(std::move(body))));
}

ServiceClient::Reply ServiceClient::getNow(const QString &path,
                                           const QList<QPair<QString, QString>> &query)
{
    return wait(m_net.get(request(path, query)));
}

ServiceClient::Reply ServiceClient::wait(QNetworkReply *reply)
{
    if (!reply->isFinished()) {
        QEventLoop loop;
        QObject::connect(reply, &QNetworkReply::finished, &loop, &QEventLoop::quit);
        loop.exec();
    }
    Reply r = read(reply);
    reply->deleteLater();
    return r;
}

ServiceClient::Reply ServiceClient::read(QNetworkReply *reply)
{
    Reply r;
    r.status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    if (r.status == 0)
        r.networkError = reply->errorString();
    const QByteArray raw = reply->readAll();
    r.body = nlohmann::json::parse(raw.begin(), raw.end(), nullptr, false);
    return r;
}
