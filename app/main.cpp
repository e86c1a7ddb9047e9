#include "completion.h"
#include "ctl.h"
#include "demotraffic.h"
#include "fscli.h"
#include "guardcli.h"
#include "options.h"
#include "service.h"
#include "signalwatcher.h"
#include "version.h"

#include <QCoreApplication>
#include <QTextStream>
#include <QThread>

#include <memory>

#ifdef LEASEHOLD_GUI
#include "enginelink.h"
#include "enginethread.h"
#include "mainwindow.h"

#include <QApplication>
#include <QIcon>
#endif

namespace {

bool hasArgument(int argc, char *argv[], std::initializer_list<const char *> names)
{
    for (int i = 1; i < argc; ++i) {
        for (const char *n : names) {
            if (qstrcmp(argv[i], n) == 0)
                return true;
        }
    }
    return false;
}

#ifdef LEASEHOLD_GUI
bool displayAvailable()
{
    return !qEnvironmentVariableIsEmpty("DISPLAY") ||
           !qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY") ||
           !qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM");
}
#endif

void identify(QCoreApplication &app)
{
    app.setApplicationName(QStringLiteral("leasehold"));
    app.setOrganizationName(QStringLiteral("Leasehold"));
    app.setApplicationVersion(QStringLiteral(LEASEHOLD_VERSION));
}

// --demo's simulated agents run on their own thread and speak HTTP to `url`, with keys minted
// for this run only (none with --open).
std::unique_ptr<QThread> startDemo(const QString &url, QHash<QString, QByteArray> keys)
{
    auto thread = std::make_unique<QThread>();
    thread->setObjectName(QStringLiteral("demo"));
    auto *demo = new DemoTraffic({QUrl(url), std::move(keys), 6, 1});
    demo->moveToThread(thread.get());
    QObject::connect(thread.get(), &QThread::started, demo, &DemoTraffic::start);
    QObject::connect(thread.get(), &QThread::finished, demo, &QObject::deleteLater);
    thread->start();
    return thread;
}

// Keys for --demo's agents, accepted until the process ends (none with --open).
QHash<QString, QByteArray> demoKeys(Service &service)
{
    QHash<QString, QByteArray> keys;
    if (!service.open()) {
        for (const QString &did : DemoTraffic::agents())
            keys.insert(did, service.temporaryKey(did));
    }
    return keys;
}

void stopDemo(std::unique_ptr<QThread> &thread)
{
    if (!thread)
        return;
    thread->quit();
    thread->wait();
}

int runHeadless(int argc, char *argv[])
{
    // Headless, the main thread is the engine thread, and its event loop is the service's hot
    // path. Qt's own dispatcher wakes its loop once for a run of posted events; GLib's writes its
    // eventfd at every post, two more system calls per request under load. (The variable is
    // read when the application is made, so it is set just for that moment; one set by the
    // user is left as it is.)
    const bool chooseDispatcher = !qEnvironmentVariableIsSet("QT_NO_GLIB");
    if (chooseDispatcher)
        qputenv("QT_NO_GLIB", "1");
    QCoreApplication app(argc, argv);
    if (chooseDispatcher)
        qunsetenv("QT_NO_GLIB");
    identify(app);
    const ParsedOptions parsed = parseOptions(QCoreApplication::arguments());
    if (!parsed.options)
        return parsed.exitCode;
    Service service(*parsed.options);
    if (const int code = service.start(); code != 0)
        return code;
    std::unique_ptr<QThread> demo;
    if (parsed.options->demo)
        demo = startDemo(service.listenUrl(), demoKeys(service));
    SignalWatcher watcher;
    QObject::connect(&watcher, &SignalWatcher::terminationRequested, &app, [&] {
        stopDemo(demo);
        service.shutdown([] { QCoreApplication::exit(0); });
    });
    return QCoreApplication::exec();
}

#ifdef LEASEHOLD_GUI
int runWindow(int argc, char *argv[])
{
    QApplication app(argc, argv);
    identify(app);
    app.setWindowIcon(QIcon(QStringLiteral(":/leasehold/leasehold.svg")));
    app.setDesktopFileName(QStringLiteral("dev.leasehold.Leasehold"));
    const ParsedOptions parsed = parseOptions(QCoreApplication::arguments());
    if (!parsed.options)
        return parsed.exitCode;

    EngineThread engine(*parsed.options);
    if (const int code = engine.start(); code != 0)
        return code;
    const QString operatorDid =
        QStringLiteral("did:op:") + qEnvironmentVariable("USER", QStringLiteral("console"));
    Service::ConsoleEnds ends;
    QString url;
    QHash<QString, QByteArray> keys;
    engine.call([&](Service &s) {
        ends = s.attachConsole(operatorDid);
        url = s.listenUrl();
        if (parsed.options->demo)
            keys = demoKeys(s);
    });

    EngineLink link(ends.feed, ends.commands);
    MainWindow window(&link);
    window.show();
    std::unique_ptr<QThread> demo;
    if (parsed.options->demo)
        demo = startDemo(url, std::move(keys));

    SignalWatcher watcher;
    QObject::connect(&watcher, &SignalWatcher::terminationRequested, &window, &QWidget::close);
    const int code = QApplication::exec();
    stopDemo(demo);
    engine.stop();
    return code;
}
#endif

} // namespace

int main(int argc, char *argv[])
{
    if (argc >= 2 && qstrcmp(argv[1], "ctl") == 0) {
        QCoreApplication app(argc, argv);
        identify(app);
        QStringList arguments = QCoreApplication::arguments();
        arguments.removeAt(1); // "ctl": the parser sees `leasehold COMMAND ...`
        return runCtl(arguments);
    }
    if (argc >= 2 && (qstrcmp(argv[1], "hook") == 0 || qstrcmp(argv[1], "guard") == 0)) {
        QCoreApplication app(argc, argv);
        identify(app);
        QStringList arguments = QCoreApplication::arguments();
        const bool hook = arguments.at(1) == QLatin1String("hook");
        arguments.removeAt(1); // the parser sees `leasehold CLIENT ...`
        return hook ? runHook(arguments) : runGuard(arguments);
    }
    if (argc >= 2 && (qstrcmp(argv[1], "run") == 0 || qstrcmp(argv[1], "why") == 0)) {
        QCoreApplication app(argc, argv);
        identify(app);
        QStringList arguments = QCoreApplication::arguments();
        const bool run = arguments.at(1) == QLatin1String("run");
        arguments.removeAt(1); // the parser sees `leasehold ...`
        return run ? runRun(arguments) : runWhy(arguments);
    }
    if (argc >= 2 && qstrcmp(argv[1], "completion") == 0) {
        if (argc != 3 || qstrcmp(argv[2], "bash") != 0) {
            QTextStream(stderr) << "usage: leasehold completion bash\n";
            return 2;
        }
        QTextStream(stdout) << bashCompletion();
        return 0;
    }
    const bool informational =
        hasArgument(argc, argv, {"--help", "-h", "--help-all", "--version", "-v"});
    if (hasArgument(argc, argv, {"--headless"}) || informational)
        return runHeadless(argc, argv);
#ifndef LEASEHOLD_GUI
    QTextStream(stderr) << "leasehold: this build has no console window; running headless\n";
    return runHeadless(argc, argv);
#else
    if (!displayAvailable()) {
        QTextStream(stderr) << "leasehold: no display; running headless (the console needs X11 or "
                               "Wayland)\n";
        return runHeadless(argc, argv);
    }
    return runWindow(argc, argv);
#endif
}
