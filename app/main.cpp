#include "options.h"
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

    // The service is not part of this build yet (see --help): show what would run and stop.
    QTextStream(stdout) << "leasehold " << LEASEHOLD_VERSION
                        << ": engine only, no HTTP service in this build\n"
                        << describeOptions(*parsed.options);
    return 0;
}
