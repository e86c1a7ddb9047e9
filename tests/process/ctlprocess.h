#pragma once

// What the tests of `leasehold ctl` share: running the binary's ctl against an instance, and
// a POST (one lease, say) over REST with a key.

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

// POST `path` (under the coordination base) with `body` and `key`; the status, and the body into
// `reply` when given.
inline int post(QNetworkAccessManager &net, const QString &url, const QByteArray &key,
                const QString &path, const QJsonObject &body, QJsonObject *reply = nullptr)
{
    QNetworkRequest request(QUrl(url + "/api/v1/acp/coordination" + path));
    request.setHeader(QNetworkRequest::ContentTypeHeader, "application/json");
    request.setRawHeader("Authorization", "Bearer " + key);
    QNetworkReply *r = net.post(request, QJsonDocument(body).toJson());
    QEventLoop loop;
    QObject::connect(r, &QNetworkReply::finished, &loop, &QEventLoop::quit);
    loop.exec();
    if (reply)
        *reply = QJsonDocument::fromJson(r->readAll()).object();
    r->deleteLater();
    return r->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
}

// POST /lease for `resource` with `key`; the status, and the body into `body` when given.
inline int acquire(QNetworkAccessManager &net, const QString &url, const QByteArray &key,
                   const QString &resource, int ttlMs, QJsonObject *body = nullptr)
{
    return post(net, url, key, "/lease", QJsonObject{{"resource", resource}, {"ttlMs", ttlMs}},
                body);
}

} // namespace ctltest
