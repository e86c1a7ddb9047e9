#include "fuzzservice.h"

#include <QCoreApplication>
#include <QDir>
#include <QEventLoop>
#include <QFile>
#include <QFileInfo>
#include <QTimer>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace leasehold::fuzz {

namespace {

const QByteArray kKeyA = "key-agent-a-0123456789";
const QByteArray kKeyB = "key-agent-b-0123456789";
const QByteArray kKeyAdmin = "key-admin-alice-012345";

// Longer than any deadline the engine keeps: a lease's longest TTL, a pin's bound, a wait.
constexpr std::int64_t kPastEveryDeadlineMs = 2 * 3'600'000;

void writeFile(const QString &path, const QByteArray &content)
{
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(content) != content.size())
        fail("cannot write the scratch workspace", path.toStdString());
}

} // namespace

void fail(const char *what, const std::string &detail)
{
    std::fprintf(stderr, "invariant broken: %s%s%s\n", what, detail.empty() ? "" : ": ",
                 detail.c_str());
    std::abort();
}

void ensureApplication()
{
    static int argc = 1;
    static char name[] = "fuzz";
    static char *argv[] = {name, nullptr};
    static QCoreApplication *app = QCoreApplication::instance() ? QCoreApplication::instance()
                                                                : new QCoreApplication(argc, argv);
    (void)app;
}

void pumpUntil(const std::function<bool()> &done, const char *what)
{
    if (done())
        return;
    QEventLoop loop;
    QTimer bound;
    bound.setSingleShot(true);
    QObject::connect(&bound, &QTimer::timeout, &loop, &QEventLoop::quit);
    QTimer poll;
    QObject::connect(&poll, &QTimer::timeout, &loop, [&] {
        if (done())
            loop.quit();
    });
    bound.start(5'000);
    poll.start(0);
    loop.exec();
    if (!done())
        fail(what);
}

std::vector<FuzzRequest> parseRequests(const std::uint8_t *data, std::size_t size,
                                       const QString &forcedPath, std::size_t maxRequests)
{
    std::vector<FuzzRequest> out;
    const QByteArray all =
        QByteArray::fromRawData(reinterpret_cast<const char *>(data), qsizetype(size));
    qsizetype at = 0;
    while (at <= all.size() && out.size() < maxRequests) {
        qsizetype end = all.indexOf("\n====\n", at);
        if (end < 0)
            end = all.size();
        const QByteArray chunk = all.mid(at, end - at);
        at = end + 6;

        qsizetype headEnd = chunk.indexOf("\n\n");
        const QByteArray head = headEnd < 0 ? chunk : chunk.left(headEnd);
        FuzzRequest request;
        RestCall &call = request.call;
        call.body = headEnd < 0 ? QByteArray() : chunk.mid(headEnd + 2);
        const QList<QByteArray> lines = head.split('\n');
        const QByteArray first = lines.value(0).trimmed();
        const qsizetype space = first.indexOf(' ');
        call.method = space < 0 ? first : first.left(space);
        const QByteArray target = space < 0 ? QByteArray("/") : first.mid(space + 1).trimmed();
        const qsizetype question = target.indexOf('?');
        call.path = forcedPath.isEmpty()
                        ? QString::fromUtf8(question < 0 ? target : target.left(question))
                        : forcedPath;
        if (question >= 0)
            call.query = QUrlQuery(QString::fromUtf8(target.mid(question + 1)));
        for (qsizetype i = 1; i < lines.size(); ++i) {
            const QByteArray &line = lines[i];
            const qsizetype colon = line.indexOf(':');
            if (colon <= 0)
                continue;
            const QByteArray name = line.left(colon).trimmed();
            const QByteArray value = line.mid(colon + 1).trimmed();
            if (name.compare("x-fuzz-advance", Qt::CaseInsensitive) == 0)
                request.advanceMs = std::clamp<qint64>(value.toLongLong(), 0, 10 * 86'400'000LL);
            else
                call.headers.append({name, value});
        }
        out.push_back(std::move(request));
    }
    return out;
}

FuzzService::FuzzService(bool workspace)
{
    ensureApplication();
    KeyStore keys;
    keys.add(kKeyA, {QStringLiteral("did:agent:a"), Role::Agent});
    keys.add(kKeyB, {QStringLiteral("did:agent:b"), Role::Agent});
    keys.add(kKeyAdmin, {QStringLiteral("did:op:alice"), Role::Admin});
    m_host = std::make_unique<EngineHost>(EngineConfig{}, &m_clock);
    if (workspace) {
        m_workspace = std::make_unique<QTemporaryDir>();
        const QString root = m_workspace->path();
        QDir(root).mkpath(QStringLiteral("src/lib"));
        QDir(root).mkpath(QStringLiteral("docs"));
        writeFile(root + QStringLiteral("/src/a.ts"), "export const a = 1;\n");
        writeFile(root + QStringLiteral("/src/lib/b.ts"), "export const b = 2;\n");
        writeFile(root + QStringLiteral("/docs/readme.md"), "# readme\n");
        QFile::link(QStringLiteral("src"), root + QStringLiteral("/inside-link"));
        QFile::link(QStringLiteral("/etc"), root + QStringLiteral("/outside-link"));
        QFile::link(QStringLiteral("loop-b"), root + QStringLiteral("/loop-a"));
        QFile::link(QStringLiteral("loop-a"), root + QStringLiteral("/loop-b"));
        m_host->setWorkspaceRoot(QFileInfo(root).canonicalFilePath().toStdString());
    }
    HttpFront::Options options;
    options.version = QStringLiteral("fuzz");
    m_front = std::make_unique<HttpFront>(*m_host, std::move(keys), options);
}

FuzzService::~FuzzService() = default;

QString FuzzService::workspaceRoot() const
{
    return m_workspace ? QFileInfo(m_workspace->path()).canonicalFilePath() : QString();
}

QByteArray FuzzService::key(char who)
{
    return who == 'a' ? kKeyA : who == 'b' ? kKeyB : kKeyAdmin;
}

quint16 FuzzService::listen()
{
    QString error;
    const quint16 port = m_front->listen(QHostAddress::LocalHost, 0, &error);
    if (port == 0)
        fail("cannot listen on 127.0.0.1", error.toStdString());
    return port;
}

void FuzzService::substitute(RestCall &call) const
{
    for (auto &[name, value] : call.headers) {
        value.replace("$admin", kKeyAdmin);
        value.replace("$a", kKeyA);
        value.replace("$b", kKeyB);
        value.replace("$session", m_session);
    }
}

void FuzzService::serve(FuzzRequest request)
{
    substitute(request.call);
    auto answered = std::make_shared<bool>(false);
    const RestCall call = request.call;
    auto send = [this, answered, call](const HttpReply &reply) {
        if (*answered)
            return false;
        *answered = true;
        check(reply, call);
        for (const auto &[name, value] : reply.headers) {
            if (name.compare("mcp-session-id", Qt::CaseInsensitive) == 0)
                m_session = value;
        }
        return true;
    };
    Deferral deferral;
    deferral.sendEvent = [answered](const QByteArray &) { return !*answered; };
    m_front->serve(std::move(request.call), send, deferral);
    // An answer built on a worker (a snapshot, an export, a file read) comes back through the
    // event loop.
    pumpUntil([&] { return *answered || deferral.onClientGone; },
              "a request neither answered nor parked");
    if (!*answered && deferral.onClientGone) {
        auto gone = std::make_shared<std::function<void()>>(
            [answered, cancel = std::move(deferral.onClientGone)] {
                if (*answered)
                    return;
                *answered = true;
                cancel();
            });
        m_pending.push_back(std::move(gone));
    }
    checkEngine();
    if (request.advanceMs > 0) {
        m_clock.advance(request.advanceMs);
        m_host->tick();
        checkEngine();
    }
}

void FuzzService::finish()
{
    for (const auto &gone : std::exchange(m_pending, {}))
        (*gone)();
    checkEngine();
    // Each round ends what was due; a wait it granted may hold a lease of its own until the next.
    for (int round = 0; round < 4; ++round) {
        m_clock.advance(kPastEveryDeadlineMs);
        m_host->tick();
        checkEngine();
    }
    const LeaseEngine &engine = m_host->engine();
    if (engine.leaseCount() != 0 || engine.parkedCount() != 0 || engine.nextDeadline())
        fail("something outlived every deadline",
             std::to_string(engine.leaseCount()) + " leases, " +
                 std::to_string(engine.parkedCount()) + " parked waits");
}

void FuzzService::check(const HttpReply &reply, const RestCall &call) const
{
    const std::string where = call.method.toStdString() + ' ' + call.path.toStdString() + ": " +
                              std::to_string(reply.status) + ' ' +
                              (reply.raw ? reply.raw->toStdString() : reply.body.dump());
    if (reply.status < 200 || reply.status >= 500)
        fail("an answer that is not 2xx-4xx", where);
    if (reply.status < 400 || reply.raw)
        return;
    // A refusal says why: REST's {"reason","error"} (a refusal's sentence is its "message"), or
    // MCP's JSON-RPC error (which may be
    // one of a batch's answers).
    const nlohmann::json &b = reply.body;
    auto sentence = [&b](const char *key) {
        return b.is_object() && b.contains(key) && b[key].is_string() &&
               !b[key].get<std::string>().empty();
    };
    const bool rest = sentence("reason") && (sentence("error") || sentence("message"));
    const bool rpc = b.is_object() && b.contains("error") && b["error"].is_object() &&
                     b["error"].value("message", std::string()).size() > 0;
    if (!rest && !rpc)
        fail("a refusal that does not say why", where);
}

void FuzzService::checkEngine() const
{
    try {
        m_host->engine().checkInvariants();
    } catch (const std::logic_error &e) {
        fail("engine invariant", e.what());
    }
}

} // namespace leasehold::fuzz
