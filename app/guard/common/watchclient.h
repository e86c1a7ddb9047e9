#pragma once

#include "serviceclient.h"

#include <QObject>
#include <QPointer>
#include <QTimer>

#include <nlohmann/json.hpp>

#include <optional>

class QNetworkReply;

// Follows an instance's watch stream (GET /watch, docs/protocol.md "The watch stream") for
// `ctl watch`, `ctl ledger --follow` and the filesystem gate: parses its server-sent events,
// and when the stream ends, is cut, or goes quiet for three heartbeats (a dead peer or a lost
// network), reconnects with Last-Event-ID set to the last revision seen, backing off from
// `reconnectMinMs` to `reconnectMaxMs`. A refusal of the request itself (a bad key, a bad
// query) is final: it is reported and no reconnect follows.
//
// Thread: the thread that made it, with an event loop.
class WatchClient : public QObject
{
    Q_OBJECT

public:
    struct Options
    {
        QString prefix;
        bool allEvents = false; // every ledger event, not only the lease changes
        bool snapshot = true;   // false: a fresh start sends only what happens from now
        int heartbeatMs = 10'000;
        int reconnectMinMs = 100;
        int reconnectMaxMs = 5'000;
    };

    WatchClient(ServiceClient::Settings settings, Options options, QObject *parent = nullptr);
    ~WatchClient() override;

    // Opens the stream; with `since`, resuming after that revision.
    void start(std::optional<quint64> since = std::nullopt);
    void stop();
    // The last revision seen (an event's or a heartbeat's id), if any.
    std::optional<quint64> revision() const { return m_revision; }
    // Streaming, and heard from within three heartbeats.
    bool live() const { return m_live; }

signals:
    // The leases as of `revision`: replace what you kept. `reason`: new, compacted, ...
    void snapshot(quint64 revision, const nlohmann::json &leases, const QString &reason);
    void resumed(quint64 from);
    // A ledger event, as GET /ledger shows it.
    void ledgerEvent(const nlohmann::json &event);
    void heartbeat(quint64 revision);
    // The stream was opened (true) or lost (false, with why); it reconnects by itself.
    void liveChanged(bool live, const QString &why);
    // The instance refused the request (status, its words): no reconnect.
    void refused(int status, const QString &why);

private:
    void open();
    void readAvailable();
    void dispatch(const QByteArray &type, const QByteArray &id, const QByteArray &data);
    void ended(const QString &why);
    void setLive(bool live, const QString &why);

    ServiceClient::Settings m_settings;
    Options m_options;
    QNetworkAccessManager m_net;
    QPointer<QNetworkReply> m_reply;
    QByteArray m_buffer;
    std::optional<quint64> m_revision;
    bool m_live = false;
    bool m_stopped = true;
    int m_backoffMs = 0;
    QTimer m_quiet; // no byte for three heartbeats: the peer is gone
    QTimer m_reconnect;
};
