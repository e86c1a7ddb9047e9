#include "consolecommands.h"

#include "enginehost.h"
#include "ledgerformat.h"
#include "wording.h"

#include <QSaveFile>

namespace leasehold {

namespace {
constexpr std::size_t kExportPage = 10'000;
}

struct ConsoleCommands::Export
{
    QSaveFile file;
    bool csv = false;
    LedgerFilter filter;
    std::uint64_t since = 0;
    qint64 written = 0;
};

ConsoleCommands::ConsoleCommands(EngineHost &host, QString operatorDid, KeyMinter minter,
                                 QObject *parent)
    : QObject(parent)
    , m_host(host)
    , m_operator(std::move(operatorDid))
    , m_minter(std::move(minter))
{}

ConsoleCommands::~ConsoleCommands()
{
    // Before anything else goes: work on the engine thread, the store's reader thread, the
    // webhooks' delivery thread or a worker finds the console gone from here on.
    m_self.clear();
}

void ConsoleCommands::announce(QString summary)
{
    m_host.whenDurable([self = m_self.weak(), summary = std::move(summary)](bool) {
        self.with([&](ConsoleCommands &c) { emit c.leverDone(summary); });
    });
}

bool ConsoleCommands::refused()
{
    if (m_readOnly.isEmpty())
        return false;
    emit leverDone(tr("Not done: %1").arg(m_readOnly));
    return true;
}

void ConsoleCommands::releaseLease(const QString &leaseId)
{
    if (refused())
        return;
    const bool done = m_host.run([&](LeaseEngine &e) {
        return e.releaseLease(m_operator.toStdString(), leaseId.toStdString());
    });
    announce(done ? tr("Released lease %1").arg(leaseId)
                  : tr("Lease %1 had already ended").arg(leaseId));
}

void ConsoleCommands::releaseHolder(const QString &did)
{
    if (refused())
        return;
    const int n = m_host.run([&](LeaseEngine &e) {
        return e.releaseHolder(m_operator.toStdString(), did.toStdString());
    });
    announce(tr("Released %1 of %2").arg(countOf(n, "lease", "leases"), did));
}

void ConsoleCommands::releaseAll()
{
    if (refused())
        return;
    const int n =
        m_host.run([&](LeaseEngine &e) { return e.releaseAll(m_operator.toStdString()); });
    announce(tr("Released all %1").arg(countOf(n, "lease", "leases")));
}

void ConsoleCommands::setPaused(bool paused)
{
    if (refused())
        return;
    m_host.run([&](LeaseEngine &e) { e.pause(m_operator.toStdString(), paused); });
    announce(paused ? tr("Admissions paused: new requests are refused") : tr("Admissions resumed"));
}

void ConsoleCommands::setSuspended(const QString &did, bool suspended)
{
    if (refused())
        return;
    m_host.run(
        [&](LeaseEngine &e) { e.suspend(m_operator.toStdString(), did.toStdString(), suspended); });
    announce(suspended ? tr("Suspended %1: it is refused until unsuspended").arg(did)
                       : tr("%1 may acquire again").arg(did));
}

void ConsoleCommands::mintKey(const QString &did)
{
    QString error;
    std::optional<QByteArray> key;
    if (!m_readOnly.isEmpty())
        error = m_readOnly;
    else if (!m_minter)
        error = tr("this service does not keep keys");
    else
        key = m_minter(did, &error);
    emit keyMinted(did, key ? QString::fromLatin1(*key) : QString(), key ? QString() : error);
}

void ConsoleCommands::exportLedger(const QString &path, const QString &format,
                                   const LedgerFilter &filter)
{
    auto job = std::make_shared<Export>();
    job->file.setFileName(path);
    job->csv = format == QLatin1String("csv");
    job->filter = filter;
    if (!job->file.open(QIODevice::WriteOnly)) {
        emit exportFinished(path, 0, job->file.errorString());
        return;
    }
    if (job->csv)
        job->file.write(ledgerCsv({}, true));
    exportPage(std::move(job));
}

void ConsoleCommands::readLedger(quint64 request, std::uint64_t since, std::size_t limit,
                                 const LedgerFilter &filter)
{
    m_host.readLedger(
        since, limit, filter, [self = m_self.weak(), request](std::vector<LedgerEvent> page) {
            auto shared = std::make_shared<const std::vector<LedgerEvent>>(std::move(page));
            self.with([&](ConsoleCommands &c) { emit c.ledgerRead(request, shared); });
        });
}

void ConsoleCommands::exportPage(std::shared_ptr<Export> job)
{
    // Pages come from the store's reader thread; encoding and writing them happens on a worker,
    // one page at a time, so neither the engine thread nor the disk's pace holds up agents.
    m_host.readLedger(
        job->since, kExportPage, job->filter,
        [self = m_self.weak(), job](std::vector<LedgerEvent> page) {
            self.with([&](ConsoleCommands &c) {
                c.m_workers.start([self, job, page = std::move(page)] {
                    if (!page.empty()) {
                        job->file.write(job->csv ? ledgerCsv(page, false) : ledgerJsonLines(page));
                        job->since = page.back().seq;
                        job->written += qint64(page.size());
                    }
                    const bool more =
                        page.size() == kExportPage && job->file.error() == QFileDevice::NoError;
                    // Posted with the console as its context: dropped if it goes first.
                    self.with([&](ConsoleCommands &owner) {
                        QMetaObject::invokeMethod(
                            &owner, [&owner, job, more] { owner.exportDone(job, more); },
                            Qt::QueuedConnection);
                    });
                });
            });
        });
}

void ConsoleCommands::exportDone(std::shared_ptr<Export> job, bool more)
{
    if (more)
        return exportPage(std::move(job));
    const QString path = job->file.fileName();
    const bool ok = job->file.error() == QFileDevice::NoError && job->file.commit();
    emit exportFinished(path, job->written, ok ? QString() : job->file.errorString());
}

void ConsoleCommands::listWebhooks()
{
    if (!m_webhooks.list)
        return emit webhooksListed({});
    const auto self = m_self.weak();
    m_webhooks.list([self](ConsoleWebhooks all) {
        self.with([&](ConsoleCommands &c) { emit c.webhooksListed(all); });
    });
}

void ConsoleCommands::addWebhook(const ConsoleWebhookSpec &spec)
{
    if (refused())
        return;
    if (!m_webhooks.add)
        return emit webhookDone({}, tr("webhooks are not available here"));
    const auto self = m_self.weak();
    const QString url = spec.url;
    m_webhooks.add(spec, [self, url](QString error) {
        self.with([&](ConsoleCommands &c) {
            emit c.webhookDone(error.isEmpty() ? tr("Added a webhook for %1").arg(url) : QString(),
                               error);
        });
    });
}

void ConsoleCommands::removeWebhook(const QString &id)
{
    if (refused())
        return;
    if (!m_webhooks.remove)
        return emit webhookDone({}, tr("webhooks are not available here"));
    const auto self = m_self.weak();
    m_webhooks.remove(id, [self, id](QString error) {
        self.with([&](ConsoleCommands &c) {
            emit c.webhookDone(error.isEmpty() ? tr("Removed webhook %1").arg(id) : QString(),
                               error);
        });
    });
}

} // namespace leasehold
