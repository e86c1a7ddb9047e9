#include "options.h"
#include "service.h"
#include "signalwatcher.h"
#include "version.h"

#include <QCoreApplication>
#include <QTextStream>

int main(int argc, char *argv[])
{
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("leasehold"));
    QCoreApplication::setOrganizationName(QStringLiteral("Leasehold"));
    QCoreApplication::setApplicationVersion(QStringLiteral(LEASEHOLD_VERSION));

    const ParsedOptions parsed = parseOptions(QCoreApplication::arguments());
    if (!parsed.options)
        return parsed.exitCode;
    if (!parsed.options->headless)
        QTextStream(stderr) << "leasehold: the console window is not part of this build yet; "
                               "running headless\n";

    Service service(*parsed.options);
    if (const int code = service.start(); code != 0)
        return code;
    SignalWatcher watcher;
    QObject::connect(&watcher, &SignalWatcher::terminationRequested, &app,
                     [&service] { service.shutdown([] { QCoreApplication::exit(0); }); });
    return QCoreApplication::exec();
}
