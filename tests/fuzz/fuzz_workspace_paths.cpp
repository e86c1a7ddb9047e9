// Workspace paths from outside bytes, resolved as the fs_* tools resolve them
// (ResourceParser::parseFilePath, then WorkspaceFs::resolve) against a scratch root holding files,
// folders, a link inside, a link out of the root, a link loop and a named pipe. The input is up
// to four paths, one per line. Asserted for each, against the kernel's own answer (realpath(3)
// of the path joined to the root):
//   - a resolved path is physical (no link left in it) and lies inside the root, and its
//     relative form names it again as a plain workspace path;
//   - where the kernel finds the path inside the root, resolve finds the same file;
//   - where the kernel finds it outside the root, resolve refuses it (escapes_root);
//   - the named pipe is refused (special_file), never opened.

#include "resourcename.h"
#include "workspacefs.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>

#include <sys/stat.h>

#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <variant>

using namespace leasehold;

namespace {

[[noreturn]] void fail(const char *what, std::string_view input, const std::string &detail = {})
{
    std::fprintf(stderr, "invariant broken: %s: [%.*s] %s\n", what, int(input.size()), input.data(),
                 detail.c_str());
    std::abort();
}

struct Scratch
{
    QTemporaryDir dir;
    QString root;
    Scratch()
    {
        root = QFileInfo(dir.path()).canonicalFilePath();
        QDir(root).mkpath(QStringLiteral("src/lib"));
        QDir(root).mkpath(QStringLiteral("docs"));
        for (const char *name : {"src/a.ts", "src/lib/b.ts", "docs/readme.md", "src/a*b.ts"}) {
            QFile file(root + '/' + QLatin1String(name));
            if (!file.open(QIODevice::WriteOnly))
                std::abort();
        }
        QFile::link(QStringLiteral("src"), root + QStringLiteral("/inside-link"));
        QFile::link(QStringLiteral("../.."), root + QStringLiteral("/src/lib/up-link"));
        QFile::link(QStringLiteral("/etc"), root + QStringLiteral("/outside-link"));
        QFile::link(QStringLiteral("loop-b"), root + QStringLiteral("/loop-a"));
        QFile::link(QStringLiteral("loop-a"), root + QStringLiteral("/loop-b"));
        ::mkfifo(QFile::encodeName(root + QStringLiteral("/pipe")).constData(), 0600);
    }
};

const Scratch &scratch()
{
    static const Scratch s;
    return s;
}

bool insideRoot(const QString &path, const QString &root)
{
    return path == root || path.startsWith(root + '/');
}

void checkOne(std::string_view text)
{
    const Scratch &s = scratch();
    static const ResourceParser parser(s.root.toStdString());
    static const WorkspaceFs fs(s.root);
    const ParsedName parsed = parser.parseFilePath(text);
    const auto *name = std::get_if<ResourceName>(&parsed);
    if (!name || !name->isWorkspacePath())
        return; // refused by the parser (an escape by `..`, an absolute path elsewhere, ...)
    if (name->isPattern())
        fail("a literal path parsed as a pattern", text);

    std::string joined = s.root.toStdString();
    for (const std::string &segment : name->path())
        joined += '/' + segment;
    char real[PATH_MAX];
    const bool kernelFound = ::realpath(joined.c_str(), real) != nullptr;
    const QString kernel = kernelFound ? QFile::decodeName(real) : QString();

    const auto resolved = fs.resolve(name->path());
    if (const auto *error = std::get_if<FsError>(&resolved)) {
        if (kernelFound && insideRoot(kernel, s.root) && error->code != "special_file" &&
            error->code != "escapes_root")
            fail("the kernel finds a path inside the root that resolve does not", text,
                 error->code + ": " + error->message);
        if (kernelFound && insideRoot(kernel, s.root) && error->code == "escapes_root")
            fail("a path inside the root refused as escaping", text, error->message);
        return;
    }
    const auto &where = std::get<WorkspaceFs::Resolved>(resolved);
    if (!insideRoot(where.absolute, s.root))
        fail("resolved outside the root", text, where.absolute.toStdString());
    if (kernelFound && !insideRoot(kernel, s.root))
        fail("the kernel finds this outside the root but resolve took it", text,
             kernel.toStdString());
    if (kernelFound && kernel != where.absolute)
        fail("resolve and the kernel disagree", text,
             where.absolute.toStdString() + " vs " + kernel.toStdString());
    if (kernelFound && kernel == s.root + QStringLiteral("/pipe"))
        fail("a named pipe was resolved", text);
    if (!where.entry.path.empty()) {
        const ParsedName again = parser.parseFilePath(where.entry.path);
        const auto *physical = std::get_if<ResourceName>(&again);
        if (!physical || !physical->isWorkspacePath() || physical->isPattern())
            fail("the physical path does not name itself", text, where.entry.path);
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    std::string_view all(reinterpret_cast<const char *>(data), size);
    for (int i = 0; i < 4 && !all.empty(); ++i) {
        const std::size_t newline = all.find('\n');
        checkOne(all.substr(0, newline));
        all = newline == std::string_view::npos ? std::string_view() : all.substr(newline + 1);
    }
    return 0;
}
