#pragma once

// A raw server-sent-events client for tests: one GET on its own QTcpSocket, the chunked body
// decoded and split into events as they arrive. A test reads at the pace it chooses (or not at
// all: `pause()` stops taking bytes from the kernel), and waits for conditions, never for time.

#include <QElapsedTimer>
#include <QEventLoop>
#include <QTcpSocket>
#include <QTest>

#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <vector>

namespace leasehold::test {

struct SseEvent
{
    QByteArray type; // "message" when the event named none
    std::optional<QByteArray> id;
    nlohmann::json data;
};

class SseReader
{
public:
    // Sends `GET target` with `headers` (e.g. "Authorization: Bearer ...\r\n") to 127.0.0.1.
    SseReader(quint16 port, const QByteArray &target, const QByteArray &headers = {},
              int receiveBuffer = 0)
    {
        if (receiveBuffer > 0)
            m_socket.setSocketOption(QAbstractSocket::ReceiveBufferSizeSocketOption, receiveBuffer);
        QObject::connect(&m_socket, &QTcpSocket::readyRead, [this] {
            if (!m_paused)
                take();
        });
        m_socket.connectToHost(QHostAddress::LocalHost, port);
        m_socket.waitForConnected(5000);
        m_socket.write("GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" + headers + "\r\n");
    }

    // Stops reading: the socket takes no more from the kernel (its own buffer is capped), so
    // bytes stay there and the server's backlog for us grows.
    void pause()
    {
        m_paused = true;
        m_socket.setReadBufferSize(4096);
    }
    bool closed() const { return m_socket.state() != QAbstractSocket::ConnectedState; }
    int status() const { return m_status; }
    const QByteArray &head() const { return m_head; }
    const QByteArray &body() const { return m_body; } // a non-stream answer's body
    std::vector<SseEvent> &events() { return m_events; }
    void close() { m_socket.abort(); }

    // Processes events until `done()` holds or `ms` of real time pass; returns `done()`.
    bool waitFor(const std::function<bool()> &done, int ms = 10'000)
    {
        QElapsedTimer t;
        t.start();
        while (!done() && t.elapsed() < ms)
            QTest::qWait(1);
        return done();
    }
    // Waits for the `n`th event (1-based) and returns whether it came.
    bool waitForEvents(std::size_t n, int ms = 10'000)
    {
        return waitFor([&] { return m_events.size() >= n; }, ms);
    }

private:
    void take()
    {
        m_raw += m_socket.readAll();
        if (m_status == 0) {
            const int end = m_raw.indexOf("\r\n\r\n");
            if (end < 0)
                return;
            m_head = m_raw.left(end);
            m_raw.remove(0, end + 4);
            m_status = m_head.split(' ').value(1).toInt();
            m_chunked = m_head.toLower().contains("transfer-encoding: chunked");
        }
        if (!m_chunked) {
            m_body += m_raw;
            m_raw.clear();
            return;
        }
        for (;;) { // chunks: size line, data, CRLF
            const int line = m_raw.indexOf("\r\n");
            if (line < 0)
                return;
            bool ok = false;
            const int size = m_raw.left(line).toInt(&ok, 16);
            if (!ok || m_raw.size() < line + 2 + size + 2)
                return;
            m_text += m_raw.mid(line + 2, size);
            m_raw.remove(0, line + 2 + size + 2);
            parse();
        }
    }
    void parse()
    {
        for (int end; (end = m_text.indexOf("\n\n")) >= 0;) {
            const QByteArray block = m_text.left(end);
            m_text.remove(0, end + 2);
            SseEvent e{"message", std::nullopt, nullptr};
            bool any = false;
            for (const QByteArray &line : block.split('\n')) {
                if (line.startsWith(':'))
                    continue;
                any = true;
                if (line.startsWith("event: "))
                    e.type = line.mid(7);
                else if (line.startsWith("id: "))
                    e.id = line.mid(4);
                else if (line.startsWith("data: "))
                    e.data = nlohmann::json::parse(line.mid(6).toStdString(), nullptr, false);
            }
            if (any)
                m_events.push_back(std::move(e));
        }
    }

    QTcpSocket m_socket;
    bool m_paused = false;
    int m_status = 0;
    bool m_chunked = false;
    QByteArray m_head, m_raw, m_text, m_body;
    std::vector<SseEvent> m_events;
};

} // namespace leasehold::test
