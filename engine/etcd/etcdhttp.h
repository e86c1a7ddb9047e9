#pragma once

#include <QByteArray>
#include <QString>

#include <memory>
#include <optional>
#include <string>

class QSslConfiguration;
class QTcpSocket;

namespace leasehold::etcd {

// One keep-alive HTTP/1.1 connection to an etcd member's JSON gateway (/v3/...), used
// blocking from the one thread that owns it (a store's writer, an election's thread): no event
// loop runs, every wait has a deadline. Bodies come with a Content-Length or chunked (etcd's
// streaming calls, such as lease keep-alive, answer chunked).
class HttpConnection
{
public:
    struct Response
    {
        int status = 0;
        QByteArray body;
    };
    // How a post failed: before the request left (nothing reached etcd), or after (it may have
    // been applied; only the caller can tell by reading).
    enum class Failure { NotSent, NoAnswer };

    // `tls`: speak TLS with this set-up (the member's URL is https://); none: plain HTTP.
    HttpConnection(QString host, quint16 port,
                   std::shared_ptr<const QSslConfiguration> tls = nullptr);
    ~HttpConnection();
    HttpConnection(const HttpConnection &) = delete;
    HttpConnection &operator=(const HttpConnection &) = delete;

    // POSTs `body` (JSON) to `path` and reads the whole answer within `timeoutMs`. On failure
    // the connection is closed (the next post opens a fresh one) and *failure, *error say why.
    std::optional<Response> post(const QByteArray &path, const QByteArray &body, int timeoutMs,
                                 Failure *failure, std::string *error);

    QString endpoint() const;

private:
    bool readAnswer(Response *response, int timeoutMs, std::string *error);
    void drop();

    QString m_host;
    quint16 m_port;
    std::shared_ptr<const QSslConfiguration> m_tls;
    std::unique_ptr<QTcpSocket> m_socket;
};

} // namespace leasehold::etcd
