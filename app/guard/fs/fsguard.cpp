#include "fsguard.h"

#include "gatefs.h"
#include "implicitleases.h"
#include "leasegate.h"
#include "signalwatcher.h"
#include "watchclient.h"

#include <QCoreApplication>
#include <QTextStream>
#include <QTimer>

#include <fcntl.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <csignal>
#include <thread>

using namespace leasehold::fsgate;
using nlohmann::json;

namespace {

void tell(int fd, const QByteArray &line)
{
    if (fd < 0)
        return;
    [[maybe_unused]] const ssize_t n = ::write(fd, line.constData(), std::size_t(line.size()));
}

std::optional<LeaseView::Lease> leaseOf(const std::string &leaseId, const std::string &resource,
                                        const std::string &holder, const std::string &mode,
                                        std::uint64_t token, std::int64_t grantedAt,
                                        std::int64_t expiresAt)
{
    static const leasehold::ResourceParser parser;
    const leasehold::ParsedName parsed = parser.parse(resource);
    const auto *name = std::get_if<leasehold::ResourceName>(&parsed);
    if (!name || leaseId.empty())
        return std::nullopt;
    return LeaseView::Lease{leaseId, *name, holder, mode, token, grantedAt, expiresAt};
}

QString text(const json &j, const char *key)
{
    const auto it = j.find(key);
    return it != j.end() && it->is_string() ? QString::fromStdString(it->get<std::string>())
                                            : QString();
}

std::int64_t number(const json &j, const char *key)
{
    const auto it = j.find(key);
    return it != j.end() && it->is_number() ? it->get<std::int64_t>() : 0;
}

} // namespace

int runFsGuard(const FsGuardSettings &settings)
{
    QTextStream err(stderr);
    const int readyFd = settings.readyFd;
    if (readyFd >= 0) // started by `leasehold run`: its end is ours
        ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    ::prctl(PR_SET_DUMPABLE, 0);
    auto fail = [&](int code, const QString &why) {
        err << "leasehold guard fs: " << why << "\n";
        tell(readyFd, "error: " + why.toUtf8() + '\n');
        return code;
    };

    // Whom the key names: the gate lets that agent's own leases through.
    ServiceClient probe(settings.service);
    const ServiceClient::Reply who = probe.postNow(
        QLatin1String(ServiceClient::kBase) + QStringLiteral("/check"), json::object());
    if (who.status != 200 || !who.body.contains("actorDid"))
        return fail(3, who.reached()
                           ? QStringLiteral("the instance refused: ") + who.explanation()
                           : QStringLiteral("cannot reach the instance at ") +
                                 settings.service.base.toString() + " (" + who.networkError + ")");
    LeaseView view(who.body["actorDid"].get<std::string>());

    int backing = settings.backingFd;
    if (backing < 0) {
        backing = ::open(settings.root.toLocal8Bit().constData(), O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (backing < 0)
            return fail(4, QStringLiteral("cannot open ") + settings.root + ": " +
                               QString::fromLocal8Bit(std::strerror(errno)));
    }
    RefusalLog log(settings.runDir.isEmpty()
                       ? std::string()
                       : (settings.runDir + QStringLiteral("/refusals.jsonl")).toStdString());
    ImplicitLeases implicit(settings.service, settings.ttlMs);
    LeaseGate gate(view, implicit, log, {settings.implicit, settings.staleAfterMs});

    GateFs::Options options;
    options.mountPoint = settings.mountPoint.toStdString();
    options.backingFd = backing;
    options.rootPath = settings.mountPoint.toStdString();
    options.threads = settings.threads;
    options.debug = settings.debug;
    options.onReady = [readyFd] {
        tell(readyFd, "ok\n");
        if (readyFd >= 0)
            ::close(readyFd);
    };
    GateFs fs(options, gate);
    std::thread serving;
    int served = 0;
    bool mounted = false;

    WatchClient::Options watchOptions;
    watchOptions.prefix = QStringLiteral("fs:");
    watchOptions.heartbeatMs = settings.heartbeatMs;
    watchOptions.reconnectMaxMs = 1'000;
    WatchClient watch(settings.service, watchOptions);
    int exitCode = 0;
    QObject::connect(
        &watch, &WatchClient::snapshot, &watch, [&](quint64, const json &leases, const QString &) {
            std::vector<LeaseView::Lease> table;
            for (const json &l : leases)
                if (auto lease =
                        leaseOf(text(l, "leaseId").toStdString(), text(l, "resource").toStdString(),
                                text(l, "holder").toStdString(), text(l, "mode").toStdString(),
                                std::uint64_t(number(l, "token")), number(l, "grantedAt"),
                                number(l, "expiresAt")))
                    table.push_back(std::move(*lease));
            view.replace(std::move(table));
            gate.setFresh(true);
            if (mounted)
                return;
            // The first table is in: only now may a change be judged.
            std::string why;
            if (!fs.mount(&why)) {
                exitCode = fail(4, QStringLiteral("cannot mount the gate at ") +
                                       settings.mountPoint + ": " + QString::fromStdString(why));
                QCoreApplication::exit(exitCode);
                return;
            }
            mounted = true;
            serving = std::thread([&] {
                served = fs.run();
                QMetaObject::invokeMethod(QCoreApplication::instance(),
                                          [] { QCoreApplication::exit(0); });
            });
        });
    QObject::connect(&watch, &WatchClient::ledgerEvent, &watch, [&](const json &e) {
        const std::string kind = text(e, "kind").toStdString();
        if (kind == "coordination.lease.granted") {
            const bool fresh = text(e, "reason").isEmpty();
            if (auto lease =
                    leaseOf(text(e, "leaseId").toStdString(), text(e, "resource").toStdString(),
                            text(e, "actorDid").toStdString(), text(e, "mode").toStdString(),
                            std::uint64_t(number(e, "token")), fresh ? number(e, "at") : 0,
                            number(e, "at") + number(e, "ttlMs")))
                view.granted(std::move(*lease));
        } else {
            view.ended(text(e, "leaseId").toStdString());
        }
    });
    QObject::connect(&watch, &WatchClient::heartbeat, &watch, [&] { gate.setFresh(true); });
    QObject::connect(&watch, &WatchClient::liveChanged, &watch, [&](bool live, const QString &why) {
        gate.setFresh(live);
        if (!live)
            err << "leasehold guard fs: the watch stream was lost (" << why
                << "); changes are refused after " << settings.staleAfterMs / 1000.0
                << " s without it\n";
        err.flush();
    });
    QObject::connect(&watch, &WatchClient::refused, &watch, [&](int, const QString &why) {
        exitCode = fail(3, QStringLiteral("the instance refused the watch: ") + why);
        if (mounted)
            fs.stop();
        else
            QCoreApplication::exit(exitCode);
    });
    SignalWatcher termination;
    ::signal(SIGHUP, [](int) { ::raise(SIGTERM); });
    QObject::connect(&termination, &SignalWatcher::terminationRequested, &watch, [&](int) {
        if (mounted)
            fs.stop(); // run() returns, and the loop ends after it
        else
            QCoreApplication::exit(0);
    });
    QTimer firstTable;
    firstTable.setSingleShot(true);
    QObject::connect(&firstTable, &QTimer::timeout, &watch, [&] {
        if (!mounted) {
            exitCode = fail(3, QStringLiteral("no lease table from the instance within 10 s"));
            QCoreApplication::exit(exitCode);
        }
    });
    firstTable.start(10'000);
    watch.start();
    const int loop = QCoreApplication::exec();
    watch.stop();
    if (serving.joinable()) {
        fs.stop();
        serving.join();
    }
    // The run is over: everything it took goes (its implicit leases and its tools' leases).
    if (mounted && !implicit.releaseAll(3'000))
        err << "leasehold guard fs: could not release the run's leases; they expire on their own\n";
    if (exitCode != 0)
        return exitCode;
    return loop != 0 ? loop : (served != 0 ? 4 : 0);
}
