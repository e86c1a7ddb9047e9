// Shell command lines and apply_patch texts from outside bytes, as the hooks read a shell
// tool's command (shellwrites.h, shelllexer.h) and a patch's headers (applypatch.h). Asserted:
// no crash, no hang (the lexer is linear: every step consumes input), and every path returned
// is non-empty, holds no NUL, and is returned once; a command that holds no '>' and none of the
// writing commands' names names nothing.

#include "applypatch.h"
#include "shellwrites.h"

#include <QSet>

#include <cstdio>
#include <cstdlib>

namespace {

[[noreturn]] void fail(const char *what, const QString &detail)
{
    std::fprintf(stderr, "shell writes fuzz: %s\n  %s\n", what, qPrintable(detail));
    std::abort();
}

void check(const QStringList &paths, const QString &input)
{
    QSet<QString> seen;
    for (const QString &p : paths) {
        if (p.isEmpty() || p.contains(QChar(0)))
            fail("an empty or NUL path", input);
        if (seen.contains(p))
            fail("a path returned twice", p);
        seen.insert(p);
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    const QString input = QString::fromUtf8(reinterpret_cast<const char *>(data), qsizetype(size));
    const QStringList writes = shellwrites::files(
        input, [](const QString &p) { return p.endsWith(QLatin1String("dir")); });
    check(writes, input);
    bool mayWrite = input.contains(QLatin1Char('>')) || input.contains(QLatin1Char('~'));
    for (const char *word : {"tee", "sed", "cp", "mv", "rm", "touch", "git", "sh", "eval"})
        mayWrite = mayWrite || input.contains(QLatin1String(word));
    if (!mayWrite && !writes.isEmpty())
        fail("a command without a write names a file", input);
    check(applypatch::files(input), input);
    return 0;
}
