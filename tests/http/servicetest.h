#pragma once

// A Leasehold service on 127.0.0.1 port 0 with a manual clock, and a small synchronous HTTP
// client for tests (it waits for the reply's finished signal, never for time to pass).

#include "enginehost.h"
#include "httpfront.h"

#include <QEventLoop>
#include <QFileInfo>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QTest>

#include <nlohmann/json.hpp>

// Compares a JSON value with anything nlohmann::json can be built from, printing both. Each
// argument is evaluated once.
#define JCOMPARE(actual, expected)                                                                 \
    do {                                                                                           \
        const nlohmann::json jActual_ = (actual);                                                  \
        const nlohmann::json jExpected_ = (expected);                                              \
        QVERIFY2(jActual_ == jExpected_,                                                           \
                 qPrintable(QString::fromStdString(jActual_.dump()) + QStringLiteral(" != ") +     \
                            QString::fromStdString(jExpected_.dump())));                           \
    } while (false)

namespace leasehold::test {

inline const QByteArray kKeyA = "key-agent-a-0123456789";
inline const QByteArray kKeyB = "key-agent-b-0123456789";
inline const QByteArray kKeyAdmin = "key-admin-alice-012345";

struct HttpResult
{
    int status = 0;
    nlohmann::json body;
    QByteArray raw;
    QList<QNetworkReply::RawHeaderPair> headers;
    QByteArray header(const QByteArray &name) const
    {
        for (const auto &[k, v] : headers) {
            if (k.compare(name, Qt::CaseInsensitive) == 0)
                return v;
        }
        return {};
    }
};

class ServiceFixture
{
public:
    struct Setup
    {
        bool open = false;
        QString workspace;
        std::int64_t progressEveryMs = 10'000;
        std::size_t ledgerCapacity = 50'000; // the host's ring of recent events
        WatchHub::Options watch;
    };

    explicit ServiceFixture(bool open = false, const QString &workspace = {},
                            std::int64_t progressEveryMs = 10'000)
        : ServiceFixture(Setup{open, workspace, progressEveryMs, 50'000, {}})
    {}

    explicit ServiceFixture(const Setup &setup)
    {
        KeyStore keys;
        keys.add(kKeyA, {QStringLiteral("did:agent:a"), Role::Agent});
        keys.add(kKeyB, {QStringLiteral("did:agent:b"), Role::Agent});
        keys.add(kKeyAdmin, {QStringLiteral("did:op:alice"), Role::Admin});
        host = std::make_unique<EngineHost>(EngineConfig{}, &clock, setup.ledgerCapacity);
        if (!setup.workspace.isEmpty())
            host->setWorkspaceRoot(QFileInfo(setup.workspace).canonicalFilePath().toStdString());
        HttpFront::Options options;
        options.open = setup.open;
        options.version = QStringLiteral("test");
        options.progressEveryMs = setup.progressEveryMs;
        options.watch = setup.watch;
        front = std::make_unique<HttpFront>(*host, std::move(keys), options);
        QString error;
        port = front->listen(QHostAddress::LocalHost, 0, &error);
    }

    QUrl url(const QString &path) const
    {
        return QUrl(QStringLiteral("http://127.0.0.1:%1%2").arg(port).arg(path));
    }

    QNetworkReply *send(const QByteArray &method, const QString &path, const QByteArray &body,
                        const QByteArray &key = {})
    {
        QNetworkRequest request(url(path));
        request.setHeader(QNetworkRequest::ContentTypeHeader, "application/json");
        if (!key.isEmpty())
            request.setRawHeader("Authorization", "Bearer " + key);
        return net.sendCustomRequest(request, method, body);
    }

    static HttpResult finish(QNetworkReply *reply)
    {
        if (!reply->isFinished()) {
            QEventLoop loop;
            QObject::connect(reply, &QNetworkReply::finished, &loop, &QEventLoop::quit);
            loop.exec();
        }
        HttpResult r;
        r.status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
        r.raw = reply->readAll();
        r.headers = reply->rawHeaderPairs();
        r.body = nlohmann::json::parse(r.raw.begin(), r.raw.end(), nullptr, false);
        reply->deleteLater();
        return r;
    }

    HttpResult call(const QByteArray &method, const QString &path, const nlohmann::json &body,
                    const QByteArray &key = {})
    {
        return finish(send(method, path,
                           body.is_null() ? QByteArray() : QByteArray::fromStdString(body.dump()),
                           key));
    }
    HttpResult post(const char *route, const nlohmann::json &body, const QByteArray &key = {})
    {
        return call("POST", QString(RestApi::kBase) + QLatin1String(route), body, key);
    }
    HttpResult get(const QString &path, const QByteArray &key = {})
    {
        return call("GET", path, nullptr, key);
    }

    ManualClock clock{1'800'000'000'000};
    std::unique_ptr<EngineHost> host;
    std::unique_ptr<HttpFront> front;
    QNetworkAccessManager net;
    quint16 port = 0;
};

} // namespace leasehold::test
