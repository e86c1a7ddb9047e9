#pragma once

#include "consolewebhooks.h"
#include "crossthreadref.h"
#include "ledgerevent.h"

#include <QMetaType>
#include <QObject>
#include <QString>
#include <QThreadPool>

#include <functional>
#include <memory>
#include <optional>
#include <vector>

namespace leasehold {

class EngineHost;

// A page of the ledger read for the console, shared between threads without a copy.
using LedgerPagePtr = std::shared_ptr<const std::vector<LedgerEvent>>;

// The console's levers, carried out on the engine thread. The console calls these through
// queued invocations (never directly from its own thread); each lever is recorded in the ledger
// under the operator's identity, and its summary is announced once it is durable.
//
// Thread: the engine thread.
class ConsoleCommands : public QObject
{
    Q_OBJECT

public:
    // Mints a key for `did` (role agent), makes the transport accept it and keeps it; returns
    // the key, or nothing with `error` set.
    using KeyMinter = std::function<std::optional<QByteArray>(const QString &did, QString *error)>;

    ConsoleCommands(EngineHost &host, QString operatorDid, KeyMinter minter,
                    QObject *parent = nullptr);
    ~ConsoleCommands() override;

    QString operatorDid() const { return m_operator; }
    // While `why` is not empty every lever and key is refused with it (a standby's console:
    // its engine is not the one agents use); exports still run.
    void setReadOnly(const QString &why) { m_readOnly = why; }

    void releaseLease(const QString &leaseId);
    void releaseHolder(const QString &did);
    void releaseAll();
    void setPaused(bool paused);
    void setSuspended(const QString &did, bool suspended);
    void mintKey(const QString &did);
    // Writes the ledger (store and recent ring) matching `filter` to `path` as "jsonl" or "csv",
    // a page at a time so agents are served between pages.
    void exportLedger(const QString &path, const QString &format, const LedgerFilter &filter);
    // Reads up to `limit` events after `since` matching `filter` (the store, then the recent
    // ring) off this thread's back, and answers with ledgerRead(request, page).
    void readLedger(quint64 request, std::uint64_t since, std::size_t limit,
                    const LedgerFilter &filter);

    // The webhooks (docs/webhooks.md), through levers the app sets; without them the console
    // hears "webhooks are not available here". Answers come as webhooksListed and webhookDone.
    void setWebhookLevers(WebhookLevers levers) { m_webhooks = std::move(levers); }
    void listWebhooks();
    void addWebhook(const ConsoleWebhookSpec &spec);
    void removeWebhook(const QString &id);

signals:
    void ledgerRead(quint64 request, leasehold::LedgerPagePtr page);
    void leverDone(const QString &summary);
    void keyMinted(const QString &did, const QString &key, const QString &error);
    void exportFinished(const QString &path, qint64 events, const QString &error);
    void webhooksListed(const leasehold::ConsoleWebhooks &webhooks);
    // An add or remove finished: `error` empty when it was done.
    void webhookDone(const QString &summary, const QString &error);

private:
    struct Export;
    void announce(QString summary);
    // Whether the console is read-only; if so, says why as the lever's outcome.
    bool refused();
    void exportPage(std::shared_ptr<Export> job);
    void exportDone(std::shared_ptr<Export> job, bool more);

    EngineHost &m_host;
    QString m_operator;
    KeyMinter m_minter;
    QString m_readOnly;
    WebhookLevers m_webhooks;
    // Encodes and writes export pages; destroyed (waiting for its jobs) before the QObject
    // base, so a job's queued call back never reaches an object that is gone.
    QThreadPool m_workers;
    // What work on other threads holds of this object (cleared first in the destructor).
    CrossThreadRef<ConsoleCommands> m_self{this};
};

} // namespace leasehold

Q_DECLARE_METATYPE(leasehold::LedgerPagePtr)
