#include "enginelink.h"

#include "consolecommands.h"
#include "consolefeed.h"

using namespace leasehold;

EngineLink::EngineLink(ConsoleFeed *feed, ConsoleCommands *commands, QObject *parent)
    : QObject(parent)
    , m_feed(feed)
    , m_commands(commands)
    , m_operator(commands->operatorDid())
{
    // Queued even when both live on one thread (tests), so a frame is never handled inside
    // the engine call that produced it.
    connect(feed, &ConsoleFeed::framePublished, this, &EngineLink::frameArrived,
            Qt::QueuedConnection);
    connect(commands, &ConsoleCommands::leverDone, this, &EngineLink::leverDone,
            Qt::QueuedConnection);
    connect(commands, &ConsoleCommands::keyMinted, this, &EngineLink::keyMinted,
            Qt::QueuedConnection);
    connect(commands, &ConsoleCommands::exportFinished, this, &EngineLink::exportFinished,
            Qt::QueuedConnection);
    connect(commands, &ConsoleCommands::ledgerRead, this, &EngineLink::ledgerRead,
            Qt::QueuedConnection);
    connect(commands, &ConsoleCommands::webhooksListed, this, &EngineLink::webhooksListed,
            Qt::QueuedConnection);
    connect(commands, &ConsoleCommands::webhookDone, this, &EngineLink::webhookDone,
            Qt::QueuedConnection);
}

template<class F> void EngineLink::post(F &&call)
{
    if (ConsoleCommands *c = m_commands.data())
        QMetaObject::invokeMethod(
            c, [c, call = std::forward<F>(call)] { call(*c); }, Qt::QueuedConnection);
}

void EngineLink::requestFrame()
{
    if (ConsoleFeed *f = m_feed.data())
        QMetaObject::invokeMethod(
            f, [f] { f->requestFrame(); }, Qt::QueuedConnection);
}

void EngineLink::releaseLease(const QString &leaseId)
{
    post([leaseId](ConsoleCommands &c) { c.releaseLease(leaseId); });
}

void EngineLink::releaseHolder(const QString &did)
{
    post([did](ConsoleCommands &c) { c.releaseHolder(did); });
}

void EngineLink::releaseAll()
{
    post([](ConsoleCommands &c) { c.releaseAll(); });
}

void EngineLink::setPaused(bool paused)
{
    post([paused](ConsoleCommands &c) { c.setPaused(paused); });
}

void EngineLink::setSuspended(const QString &did, bool suspended)
{
    post([did, suspended](ConsoleCommands &c) { c.setSuspended(did, suspended); });
}

void EngineLink::mintKey(const QString &did)
{
    post([did](ConsoleCommands &c) { c.mintKey(did); });
}

void EngineLink::exportLedger(const QString &path, const QString &format)
{
    post([path, format](ConsoleCommands &c) { c.exportLedger(path, format, {}); });
}

quint64 EngineLink::readLedger(std::uint64_t since, std::size_t limit, const LedgerFilter &filter)
{
    const quint64 request = ++m_lastRequest;
    post([request, since, limit, filter](ConsoleCommands &c) {
        c.readLedger(request, since, limit, filter);
    });
    return request;
}

void EngineLink::listWebhooks()
{
    post([](ConsoleCommands &c) { c.listWebhooks(); });
}

void EngineLink::addWebhook(const ConsoleWebhookSpec &spec)
{
    post([spec](ConsoleCommands &c) { c.addWebhook(spec); });
}

void EngineLink::removeWebhook(const QString &id)
{
    post([id](ConsoleCommands &c) { c.removeWebhook(id); });
}
