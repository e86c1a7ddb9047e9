#include "applypatch.h"

namespace applypatch {

QStringList files(const QString &patch)
{
    static const QLatin1String kHeaders[] = {
        QLatin1String("*** Add File:"), QLatin1String("*** Update File:"),
        QLatin1String("*** Delete File:"), QLatin1String("*** Move to:")};
    QStringList out;
    const QStringList lines = patch.split(QLatin1Char('\n'));
    for (QString line : lines) {
        if (line.endsWith(QLatin1Char('\r')))
            line.chop(1);
        // Hunk lines start with ' ', '+', '-' or "@@"; a header never does.
        if (!line.startsWith(QLatin1String("*** ")))
            continue;
        for (const QLatin1String &header : kHeaders) {
            if (!line.startsWith(header))
                continue;
            const QString path = line.mid(header.size()).trimmed();
            // No file name holds a NUL: such a header names nothing the tool could write.
            if (!path.isEmpty() && !path.contains(QChar(0)) && !out.contains(path))
                out << path;
            break;
        }
    }
    return out;
}

} // namespace applypatch
