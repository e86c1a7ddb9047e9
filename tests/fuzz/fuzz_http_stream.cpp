// HTTP framing from outside bytes: the input is written as-is to a real connection to the
// service on 127.0.0.1 port 0 — through the connection guard (GuardedTcpServer: the header and
// body caps, the connection's request accounting) and QHttpServer's parser to the REST and MCP
// surfaces — and the client then half-closes, as a client that sent everything does.
// Asserted:
//   - the server closes the connection within a bound once the client has stopped sending, and
//     the guard counts it closed: no connection is held open by a half-sent request;
//   - everything the server wrote back is well-formed HTTP/1.1 answers (status line, headers,
//     a body of the length it declared, or chunks) and none is a 5xx;
//   - the engine's invariants hold, and nothing outlives its deadline (fuzzservice.h).

#include "fuzzservice.h"

#include <QCoreApplication>
#include <QTcpSocket>

#include <sys/socket.h>

#include <cstddef>
#include <cstdint>

using namespace leasehold;
using namespace leasehold::fuzz;

namespace {

constexpr int kBoundMs = 5'000;

// Checks that `wire` is a run of whole HTTP/1.1 answers, none of them a 5xx.
void checkAnswers(const QByteArray &wire)
{
    qsizetype at = 0;
    while (at < wire.size()) {
        const qsizetype headEnd = wire.indexOf("\r\n\r\n", at);
        if (!wire.mid(at).startsWith("HTTP/1.1 ") || headEnd < 0)
            fail("the server wrote something that is not an HTTP answer",
                 wire.mid(at, 200).toStdString());
        const QByteArray head = wire.mid(at, headEnd - at);
        const int status = head.mid(9, 3).toInt();
        if (status < 100 || status >= 500)
            fail("an answer that is not 1xx-4xx", head.toStdString());
        at = headEnd + 4;
        qsizetype length = 0;
        bool chunked = false;
        for (const QByteArray &line : head.split('\n')) {
            const QByteArray l = line.trimmed().toLower();
            if (l.startsWith("content-length:"))
                length = l.mid(15).trimmed().toLongLong();
            else if (l == "transfer-encoding: chunked")
                chunked = true;
        }
        if (!chunked) {
            if (at + length > wire.size())
                fail("an answer shorter than its Content-Length", head.toStdString());
            at += length;
            continue;
        }
        for (;;) {
            const qsizetype lineEnd = wire.indexOf("\r\n", at);
            bool ok = false;
            const qsizetype chunk =
                lineEnd < 0 ? 0 : wire.mid(at, lineEnd - at).toLongLong(&ok, 16);
            if (!ok || lineEnd + 2 + chunk + 2 > wire.size())
                fail("a broken chunk", head.toStdString());
            at = lineEnd + 2 + chunk + 2;
            if (chunk == 0)
                break;
        }
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    FuzzService service;
    const quint16 port = service.listen();
    QTcpSocket client;
    client.connectToHost(QHostAddress::LocalHost, port);
    if (!client.waitForConnected(kBoundMs))
        fail("cannot connect", client.errorString().toStdString());
    client.write(reinterpret_cast<const char *>(data), qint64(size));
    while (client.bytesToWrite() > 0) {
        if (!client.waitForBytesWritten(kBoundMs))
            fail("cannot write the input", client.errorString().toStdString());
    }
    // Everything is sent: the client's half of the connection ends; the server's may answer.
    ::shutdown(int(client.socketDescriptor()), SHUT_WR);
    QByteArray wire;
    QObject::connect(&client, &QTcpSocket::readyRead, [&] { wire += client.readAll(); });
    pumpUntil([&] { return client.state() == QAbstractSocket::UnconnectedState; },
              "the server kept the connection open after the client stopped sending");
    wire += client.readAll();
    pumpUntil([&] { return service.front().gauges().openConnections == 0; },
              "the guard still counts a closed connection");
    checkAnswers(wire);
    service.finish();
    return 0;
}
