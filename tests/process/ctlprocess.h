#pragma once

// What the tests of `leasehold ctl` share: running the binary's ctl against an instance, and
// one lease over REST with an agent's key.

#include <QEventLoop>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QProcess>

namespace ctltest {

struct Run
{
    int code = -1;
    QByteArray out;
    QByteArray err;
};

// `leasehold ctl ARGS...` with `where` (the instance's URL and key source) first.
inline Run ctl(const QStringList &where, const QStringList &args)
{
    QProcess p;
    p.start(QStringLiteral(LEASEHOLD_BINARY), QStringList{"ctl"} + where + args);
    if (!p.waitForFinished(20'000))
        return {};
    return {p.exitCode(), p.readAllStandardOutput(), p.readAllStandardError()};
}

// POST /lease for `resource` with `key`; the status, and the body into `body` when given.
inline int acquire(QNetworkAccessManager &net, const QString &url, const QByteArray &key,
                   const QString &resource, int ttlMs, QJsonObject *body = nullptr)
{
    QNetworkRequest request(QUrl(url + "/api/v1/acp/coordination/lease"));
    request.setHeader(QNetworkRequest::ContentTypeHeader, "application/json");
    request.setRawHeader("Authorization", "Bearer " + key);
    QNetworkReply *reply = net.post(
        request, QJsonDocument(QJsonObject{{"resource", resource}, {"ttlMs", ttlMs}}).toJson());
    QEventLoop loop;
    QObject::connect(reply, &QNetworkReply::finished, &loop, &QEventLoop::quit);
    loop.exec();
    if (body)
        *body = QJsonDocument::fromJson(reply->readAll()).object();
    reply->deleteLater();
    return reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
}

} // namespace ctltest
