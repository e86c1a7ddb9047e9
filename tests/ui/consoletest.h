#pragma once

// A real Leasehold service on its engine thread (port 0, a temporary data directory, bearer
// keys) with the console window attached, and a small synchronous HTTP client. Waiting is for
// replies and frames (conditions), never for time to pass.

#include "enginelink.h"
#include "enginethread.h"
#include "mainwindow.h"
#include "service.h"

#include <QEventLoop>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <functional>
#include <memory>

namespace consoletest {

inline const QByteArray kKeyA = "console-key-agent-a-0123";
inline const QByteArray kKeyB = "console-key-agent-b-0123";

struct Reply
{
    int status = 0;
    QJsonObject body;
};

class ConsoleFixture
{
public:
    // `adjust` changes the options before the start (cluster mode, say).
    explicit ConsoleFixture(bool open = false, const std::function<void(AppOptions &)> &adjust = {})
    {
        QStandardPaths::setTestModeEnabled(true); // window settings go to a test location
        QFile keys(m_dir.filePath(QStringLiteral("keys.json")));
        if (keys.open(QIODevice::WriteOnly))
            keys.write("{\"keys\":[{\"key\":\"" + kKeyA +
                       "\",\"did\":\"did:agent:a\"},"
                       "{\"key\":\"" +
                       kKeyB + "\",\"did\":\"did:agent:b\"}]}");
        keys.close();
        m_options.port = 0;
        m_options.open = open;
        m_options.dataDir = m_dir.filePath(QStringLiteral("data"));
        m_options.keysFile = keys.fileName();
        if (adjust)
            adjust(m_options);
        started = start();
    }
    ~ConsoleFixture() { stop(); }

    // Helpers return whether they worked, so a caller stops at the first failure:
    // QVERIFY(f.start()).
    bool started = false; // what the constructor's start() said: QVERIFY(f.started)

    [[nodiscard]] bool start()
    {
        engine = std::make_unique<EngineThread>(m_options);
        if (engine->start() != 0) {
            QTest::qFail("the engine thread did not start", __FILE__, __LINE__);
            return false;
        }
        Service::ConsoleEnds ends;
        engine->call([&](Service &s) {
            ends = s.attachConsole(QStringLiteral("did:op:tester"));
            url = s.listenUrl();
        });
        link = std::make_unique<EngineLink>(ends.feed, ends.commands);
        window = std::make_unique<MainWindow>(link.get());
        window->show();
        return true;
    }
    void stop()
    {
        window.reset();
        link.reset();
        engine.reset();
    }
    // Waits until the window has applied `n` more frames (the feed publishes one a second
    // even when idle), so "nothing changed" is checked against a fresh picture.
    [[nodiscard]] bool nextFrames(std::uint64_t n = 2)
    {
        const std::uint64_t target = window->framesApplied() + n;
        link->requestFrame();
        if (QTest::qWaitFor([&] { return window->framesApplied() >= target; }, 5000))
            return true;
        QTest::qFail("the console applied no new frames within 5 s", __FILE__, __LINE__);
        return false;
    }

    Reply post(const QString &route, const QJsonObject &body, const QByteArray &key = {})
    {
        QNetworkRequest request(QUrl(url + QStringLiteral("/api/v1/acp/coordination") + route));
        request.setHeader(QNetworkRequest::ContentTypeHeader,
                          QByteArrayLiteral("application/json"));
        if (!key.isEmpty())
            request.setRawHeader("Authorization", "Bearer " + key);
        QNetworkReply *reply =
            net.post(request, QJsonDocument(body).toJson(QJsonDocument::Compact));
        QEventLoop loop;
        QObject::connect(reply, &QNetworkReply::finished, &loop, &QEventLoop::quit);
        loop.exec();
        Reply r;
        r.status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
        r.body = QJsonDocument::fromJson(reply->readAll()).object();
        reply->deleteLater();
        return r;
    }
    Reply acquire(const QByteArray &key, const QString &resource, int waitMs = 0)
    {
        QJsonObject body{{"resource", resource}, {"ttlMs", 60'000}};
        if (waitMs > 0)
            body.insert(QStringLiteral("waitMs"), waitMs);
        return post(QStringLiteral("/lease"), body, key);
    }

    std::unique_ptr<EngineThread> engine;
    std::unique_ptr<EngineLink> link;
    std::unique_ptr<MainWindow> window;
    QString url;
    QNetworkAccessManager net;

private:
    QTemporaryDir m_dir;
    AppOptions m_options;
};

} // namespace consoletest
