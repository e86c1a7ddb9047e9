#pragma once

#include "consolecommands.h"
#include "consoleframe.h"
#include "ledgerevent.h"

#include <QObject>
#include <QPointer>

namespace leasehold {
class ConsoleFeed;
} // namespace leasehold

// The console's only way to the engine: frames arrive from the feed through queued signals,
// and every lever travels to the engine thread as a queued call. Nothing here blocks, so the
// window never waits for the engine.
//
// Thread: the UI thread; the feed and the commands live on the engine thread.
class EngineLink : public QObject
{
    Q_OBJECT

public:
    EngineLink(leasehold::ConsoleFeed *feed, leasehold::ConsoleCommands *commands,
               QObject *parent = nullptr);

    QString operatorDid() const { return m_operator; }

    void requestFrame();
    void releaseLease(const QString &leaseId);
    void releaseHolder(const QString &did);
    void releaseAll();
    void setPaused(bool paused);
    void setSuspended(const QString &did, bool suspended);
    void mintKey(const QString &did);
    void exportLedger(const QString &path, const QString &format);
    // Asks for up to `limit` ledger events after `since` matching `filter`; the answer comes
    // as ledgerRead(request, page), with the number this returns.
    quint64 readLedger(std::uint64_t since, std::size_t limit,
                       const leasehold::LedgerFilter &filter);
    void listWebhooks();
    void addWebhook(const leasehold::ConsoleWebhookSpec &spec);
    void removeWebhook(const QString &id);

signals:
    void frameArrived(leasehold::ConsoleFramePtr frame);
    void leverDone(const QString &summary);
    void keyMinted(const QString &did, const QString &key, const QString &error);
    void exportFinished(const QString &path, qint64 events, const QString &error);
    void ledgerRead(quint64 request, leasehold::LedgerPagePtr page);
    void webhooksListed(const leasehold::ConsoleWebhooks &webhooks);
    void webhookDone(const QString &summary, const QString &error);

private:
    template<class F> void post(F &&call);

    QPointer<leasehold::ConsoleFeed> m_feed;
    QPointer<leasehold::ConsoleCommands> m_commands;
    QString m_operator;
    quint64 m_lastRequest = 0;
};
