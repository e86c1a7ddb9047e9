#include "ctlclient.h"

#include <QEventLoop>
#include <QNetworkReply>
#include <QUrlQuery>

CtlClient::CtlClient(QUrl base, QByteArray key, int timeoutMs)
    : m_base(std::move(base))
    , m_key(std::move(key))
    , m_timeoutMs(timeoutMs)
{}

QNetworkRequest CtlClient::request(const QString &path, const QList<QPair<QString, QString>> &query)
{
    QUrl url = m_base;
    url.setPath(m_base.path().chopped(m_base.path().endsWith(QLatin1Char('/')) ? 1 : 0) + path);
    if (!query.isEmpty()) {
        QUrlQuery q;
        q.setQueryItems(query);
        url.setQuery(q);
    }
    QNetworkRequest r(url);
    r.setTransferTimeout(m_timeoutMs);
    r.setHeader(QNetworkRequest::ContentTypeHeader, QByteArrayLiteral("application/json"));
    if (!m_key.isEmpty())
        r.setRawHeader("Authorization", "Bearer " + m_key);
    return r;
}

CtlClient::Reply CtlClient::get(const QString &path, const QList<QPair<QString, QString>> &query)
{
    return finish(m_net.get(request(path, query)));
}

CtlClient::Reply CtlClient::post(const QString &path, const nlohmann::json &body)
{
    return finish(m_net.post(request(path, {}), QByteArray::fromStdString(body.dump())));
}

CtlClient::Reply CtlClient::finish(QNetworkReply *reply)
{
    QEventLoop loop;
    QObject::connect(reply, &QNetworkReply::finished, &loop, &QEventLoop::quit);
    if (!reply->isFinished())
        loop.exec();
    Reply r;
    r.status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    if (r.status == 0)
        r.networkError = reply->errorString();
    const QByteArray raw = reply->readAll();
    r.body = nlohmann::json::parse(raw.begin(), raw.end(), nullptr, false);
    reply->deleteLater();
    return r;
}
