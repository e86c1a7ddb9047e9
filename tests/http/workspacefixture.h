#pragma once

// What the workspace tools' tests share: a service with a temporary workspace (and a folder
// outside it), two agents' MCP sessions (a initialized, b not: a works solo until b connects),
// and files to put and read in the workspace.

#include "mcptest.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QSemaphore>
#include <QTemporaryDir>

#include <sys/stat.h>

namespace leasehold::test {

struct WorkspaceFixture
{
    void start()
    {
        ws = std::make_unique<QTemporaryDir>();
        outside = std::make_unique<QTemporaryDir>();
        QVERIFY(ws->isValid() && outside->isValid());
        s = std::make_unique<ServiceFixture>(false, ws->path());
        QVERIFY(s->port != 0);
        a = std::make_unique<McpClient>(*s, kKeyA);
        b = std::make_unique<McpClient>(*s, kKeyB);
        QCOMPARE(a->initialize().status, 200);
    }

    void stop()
    {
        s->host->engine().checkInvariants();
        a.reset();
        b.reset();
        s.reset();
    }

    QString file(const QString &relative) const { return ws->path() + QLatin1Char('/') + relative; }
    // Whether the file was written: QVERIFY(put(...)).
    [[nodiscard]] bool put(const QString &relative, const QByteArray &content) const
    {
        QDir().mkpath(QFileInfo(file(relative)).absolutePath());
        QFile f(file(relative));
        const bool written = f.open(QIODevice::WriteOnly | QIODevice::Truncate) &&
                             f.write(content) == content.size() && f.flush();
        if (!written)
            QTest::qFail(qPrintable(QStringLiteral("cannot write %1").arg(relative)), __FILE__,
                         __LINE__);
        return written;
    }
    QByteArray contentOf(const QString &relative) const
    {
        QFile f(file(relative));
        return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
    }
    static std::string text(const nlohmann::json &result) { return result["content"][0]["text"]; }

    std::unique_ptr<QTemporaryDir> ws;
    std::unique_ptr<QTemporaryDir> outside;
    std::unique_ptr<ServiceFixture> s;
    std::unique_ptr<McpClient> a; // did:agent:a, initialized
    std::unique_ptr<McpClient> b; // did:agent:b, not initialized: a works solo until b connects
};

} // namespace leasehold::test
