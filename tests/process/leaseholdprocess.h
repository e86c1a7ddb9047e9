#pragma once

// Starting the leasehold binary as an operator would, for the process tests: the arguments
// given, then the port read from its first line ("listening http://127.0.0.1:PORT").

#include <QProcess>
#include <QStringList>

namespace leasehold::test {

// Starts LEASEHOLD_BINARY with `arguments` (add "--port", "0"); the port it listens on, or 0.
inline quint16 startLeasehold(QProcess &process, const QStringList &arguments)
{
    process.start(QStringLiteral(LEASEHOLD_BINARY), arguments);
    if (!process.waitForStarted(10'000))
        return 0;
    while (!process.canReadLine()) {
        if (!process.waitForReadyRead(20'000)) // restoring a large database takes a while
            return 0;
    }
    const QByteArray line = process.readLine().trimmed();
    if (!line.startsWith("listening http://127.0.0.1:"))
        return 0;
    return static_cast<quint16>(line.mid(line.lastIndexOf(':') + 1).toUInt());
}

} // namespace leasehold::test
