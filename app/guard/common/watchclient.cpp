#include "watchclient.h"

#include <QNetworkReply>

WatchClient::WatchClient(ServiceClient::Settings settings, Options options, QObject *parent)
    : QObject(parent)
    , m_settings(std::move(settings))
    , m_options(std::move(options))
{
    m_quiet.setSingleShot(true);
    m_quiet.setInterval(3 * m_options.heartbeatMs + 1000);
    connect(&m_quiet, &QTimer::timeout, this, [this] {
        if (m_reply)
            m_reply->abort(); // finished() follows, and with it the reconnect
    });
    m_reconnect.setSingleShot(true);
    connect(&m_reconnect, &QTimer::timeout, this, &WatchClient::open);
}

WatchClient::~WatchClient()
{
    stop();
}

void WatchClient::start(std::optional<quint64> since)
{
    m_stopped = false;
    m_revision = since;
    m_backoffMs = 0;
    open();
}

void WatchClient::stop()
{
    m_stopped = true;
    m_reconnect.stop();
    m_quiet.stop();
    if (m_reply) {
        QNetworkReply *reply = m_reply;
        m_reply = nullptr;
        reply->disconnect(this);
        reply->abort();
        reply->deleteLater();
    }
    m_live = false;
}

void WatchClient::open()
{
    if (m_stopped)
        return;
    QList<QPair<QString, QString>> query;
    if (!m_options.prefix.isEmpty())
        query.append({QStringLiteral("prefix"), m_options.prefix});
    if (m_options.allEvents)
        query.append({QStringLiteral("events"), QStringLiteral("all")});
    if (!m_options.snapshot)
        query.append({QStringLiteral("snapshot"), QStringLiteral("false")});
    query.append({QStringLiteral("heartbeatMs"), QString::number(m_options.heartbeatMs)});
    QNetworkRequest request = ServiceClient::request(
        m_settings, QLatin1String(ServiceClient::kBase) + QStringLiteral("/watch"), query);
    request.setTransferTimeout(0); // a stream has no end to wait for; m_quiet watches it
    request.setRawHeader("Accept", "text/event-stream");
    if (m_revision)
        request.setRawHeader("Last-Event-ID", QByteArray::number(*m_revision));
    m_buffer.clear();
    m_reply = m_net.get(request);
    m_quiet.start();
    connect(m_reply, &QNetworkReply::readyRead, this, &WatchClient::readAvailable);
    connect(m_reply, &QNetworkReply::finished, this, [this, reply = m_reply.data()] {
        reply->deleteLater();
        if (reply != m_reply)
            return;
        m_reply = nullptr;
        const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
        if (status >= 400 && status != 503) {
            const ServiceClient::Reply r = ServiceClient::read(reply);
            m_stopped = true;
            setLive(false, r.explanation());
            emit refused(status, r.explanation());
            return;
        }
        ended(reply->error() == QNetworkReply::NoError ? QStringLiteral("the stream ended")
                                                       : reply->errorString());
    });
}

void WatchClient::readAvailable()
{
    if (!m_reply)
        return;
    const int status = m_reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    if (status != 200)
        return; // an error answer: read whole when it finishes
    m_quiet.start();
    m_buffer += m_reply->readAll();
    // Events end with a blank line; lines are "field: value". Comments start with ':'.
    for (qsizetype end; (end = m_buffer.indexOf("\n\n")) >= 0;) {
        const QByteArray block = m_buffer.left(end);
        m_buffer.remove(0, end + 2);
        QByteArray type = "message", id, data;
        bool any = false;
        for (const QByteArray &line : block.split('\n')) {
            if (line.isEmpty() || line.startsWith(':'))
                continue;
            any = true;
            const qsizetype colon = line.indexOf(':');
            const QByteArray field = colon < 0 ? line : line.left(colon);
            QByteArray value = colon < 0 ? QByteArray() : line.mid(colon + 1);
            if (value.startsWith(' '))
                value.remove(0, 1);
            if (field == "event")
                type = value;
            else if (field == "id")
                id = value;
            else if (field == "data")
                data += data.isEmpty() ? value : '\n' + value;
        }
        try {
            if (any)
                dispatch(type, id, data);
        } catch (const nlohmann::json::exception &) {
            // A field of a type nobody expected: that event is skipped, the stream goes on.
        }
        if (!m_reply)
            return; // a handler stopped the stream
    }
}

void WatchClient::dispatch(const QByteArray &type, const QByteArray &id, const QByteArray &data)
{
    const nlohmann::json body = nlohmann::json::parse(data.toStdString(), nullptr, false);
    if (!id.isEmpty()) {
        bool ok = false;
        const quint64 n = id.toULongLong(&ok);
        if (ok)
            m_revision = n;
    }
    if (!m_live) {
        m_backoffMs = 0;
        setLive(true, QString());
    }
    if (type == "ledger" && body.is_object())
        emit ledgerEvent(body);
    else if (type == "snapshot" && body.is_object())
        emit snapshot(body.value("revision", quint64(0)),
                      body.value("leases", nlohmann::json::array()),
                      QString::fromStdString(body.value("reason", std::string())));
    else if (type == "resumed" && body.is_object())
        emit resumed(body.value("from", quint64(0)));
    else if (type == "heartbeat" && body.is_object())
        emit heartbeat(body.value("revision", quint64(0)));
    else if (type == "cut" && m_reply)
        m_reply->abort(); // the server says why in `body`; reconnecting is the answer
}

void WatchClient::ended(const QString &why)
{
    m_quiet.stop();
    setLive(false, why);
    if (m_stopped)
        return;
    m_backoffMs = m_backoffMs == 0 ? m_options.reconnectMinMs
                                   : std::min(2 * m_backoffMs, m_options.reconnectMaxMs);
    m_reconnect.start(m_backoffMs);
}

void WatchClient::setLive(bool live, const QString &why)
{
    if (m_live == live)
        return;
    m_live = live;
    emit liveChanged(live, why);
}
