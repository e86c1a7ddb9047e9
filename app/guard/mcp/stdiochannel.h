#pragma once

#include <QObject>
#include <QSocketNotifier>

#include <nlohmann/json.hpp>

#include <memory>

// MCP's stdio transport from the server's side: one JSON-RPC message per line on stdin, read
// when the event loop sees stdin readable (one read() then never blocks), delivered as parsed
// JSON; `send` writes one line to stdout and flushes it. A line that is not JSON is delivered as
// a discarded value, so the caller can answer it with a parse error.
class StdioChannel : public QObject
{
    Q_OBJECT

public:
    explicit StdioChannel(QObject *parent = nullptr);
    ~StdioChannel() override;

    void start();
    static void send(const nlohmann::json &message);

signals:
    void message(const nlohmann::json &message);
    void closed(); // stdin reached its end: the client is gone

private:
    void readAvailable();

    std::unique_ptr<QSocketNotifier> m_notifier;
    std::string m_partial;
};
