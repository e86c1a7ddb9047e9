#include "demotraffic.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QTimer>

namespace {

constexpr const char *kBase = "/api/v1/acp/coordination";
constexpr int kHerd = 50;

QString workerDid(int i)
{
    return QStringLiteral("did:agent:worker-%1").arg(i + 1);
}

QString herdDid(int i)
{
    return QStringLiteral("did:agent:herd-%1").arg(i + 1, 2, 10, QLatin1Char('0'));
}

QJsonObject acquire(const QString &resource, int ttlMs, int waitMs = 0,
                    const QString &mode = QStringLiteral("write"))
{
    QJsonObject body{{"resource", resource}, {"ttlMs", ttlMs}, {"mode", mode}};
    if (waitMs > 0)
        body.insert(QStringLiteral("waitMs"), waitMs);
    return body;
}

// The back-off a refusal asks for: the stampede's waitMs, else a little while.
int backoffOf(const QJsonObject &refusal)
{
    const int ms = refusal.value(QStringLiteral("stampede")).toObject().value("waitMs").toInt();
    return ms > 0 ? ms : 400;
}

} // namespace

DemoTraffic::DemoTraffic(Options options, QObject *parent)
    : QObject(parent)
    , m_options(std::move(options))
    , m_random(m_options.seed)
{}

DemoTraffic::~DemoTraffic() = default;

QStringList DemoTraffic::agents(int workers)
{
    QStringList all{"did:agent:release-bot-a",  "did:agent:release-bot-b",
                    "did:agent:flaky-builder",  "did:agent:refactor-left",
                    "did:agent:refactor-right", "did:agent:herd-lead"};
    for (int i = 0; i < kHerd; ++i)
        all << herdDid(i);
    for (int i = 0; i < workers; ++i)
        all << workerDid(i);
    return all;
}

void DemoTraffic::start()
{
    m_net = new QNetworkAccessManager(this);
    deployScene();
    after(1500, [this] { crashScene(); });
    after(3000, [this] { deadlockScene(); });
    after(5000, [this] { herdScene(); });
    for (int i = 0; i < m_options.workers; ++i)
        after(200 * i, [this, i] { worker(workerDid(i)); });
}

void DemoTraffic::after(int ms, std::function<void()> step)
{
    QTimer::singleShot(ms, this, std::move(step));
}

void DemoTraffic::post(const QString &did, const QString &route, const QJsonObject &body,
                       Reply reply)
{
    QUrl url = m_options.base;
    url.setPath(QLatin1String(kBase) + route);
    QNetworkRequest request(url);
    request.setHeader(QNetworkRequest::ContentTypeHeader, QByteArrayLiteral("application/json"));
    request.setTransferTimeout(120'000);
    QJsonObject payload = body;
    if (m_options.keys.isEmpty())
        payload.insert(QStringLiteral("actorDid"), did);
    else
        request.setRawHeader("Authorization", "Bearer " + m_options.keys.value(did));
    ++m_requests;
    QNetworkReply *r = m_net->post(request, QJsonDocument(payload).toJson(QJsonDocument::Compact));
    connect(r, &QNetworkReply::finished, this, [r, reply = std::move(reply)] {
        r->deleteLater();
        const int status = r->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
        if (reply)
            reply(status, QJsonDocument::fromJson(r->readAll()).object());
    });
}

// A holds the deploy lock; B is refused (naming A), then parks; A's release hands it to B.
void DemoTraffic::deployScene()
{
    const QString a = QStringLiteral("did:agent:release-bot-a");
    const QString b = QStringLiteral("did:agent:release-bot-b");
    const QString lock = QStringLiteral("lock:deploy/production");
    post(a, "/lease", acquire(lock, 60'000), [=, this](int status, const QJsonObject &) {
        if (status != 200)
            return after(2000, [this] { deployScene(); });
        after(800, [=, this] {
            post(b, "/lease", acquire(lock, 60'000), [=, this](int, const QJsonObject &) {
                post(b, "/lease", acquire(lock, 60'000, 20'000),
                     [=, this](int granted, const QJsonObject &) {
                         after(granted == 200 ? 4000 : 0, [=, this] {
                             post(b, "/release", {{"resource", lock}});
                             after(3000, [this] { deployScene(); });
                         });
                     });
            });
        });
        after(7000, [=, this] { post(a, "/release", {{"resource", lock}}); });
    });
}

// Takes a short lease and never gives it back: it expires, and the builder's trust falls.
void DemoTraffic::crashScene()
{
    post(QStringLiteral("did:agent:flaky-builder"), "/lease",
         acquire(QStringLiteral("fs:build/cache"), 6000));
    after(2500, [this] {
        post(workerDid(0), "/lease", acquire(QStringLiteral("fs:build/cache"), 5000));
    });
    after(15'000, [this] { crashScene(); });
}

// Each holds one file and wants the other's; the second to ask is refused as a deadlock, backs
// off by releasing, and the first gets both.
void DemoTraffic::deadlockScene()
{
    const QString left = QStringLiteral("did:agent:refactor-left");
    const QString right = QStringLiteral("did:agent:refactor-right");
    const QString parser = QStringLiteral("fs:src/parser.cpp");
    const QString lexer = QStringLiteral("fs:src/lexer.cpp");
    post(left, "/lease", acquire(parser, 30'000));
    post(right, "/lease", acquire(lexer, 30'000), [=, this](int, const QJsonObject &) {
        after(600, [=, this] {
            post(left, "/lease", acquire(lexer, 30'000), [=, this](int, const QJsonObject &) {
                post(right, "/lease", acquire(parser, 30'000), [=, this](int, const QJsonObject &) {
                    after(2500, [=, this] {
                        post(right, "/release", {});
                        after(500, [=, this] {
                            post(left, "/lease",
                                 QJsonObject{{"resources", QJsonArray{parser, lexer}},
                                             {"ttlMs", 30'000}});
                            after(3000, [=, this] { post(left, "/release", {}); });
                        });
                    });
                });
            });
        });
    });
    after(20'000, [this] { deadlockScene(); });
}

// Fifty agents want one file the lead holds; each retries after the back-off it was given.
void DemoTraffic::herdScene()
{
    const QString lead = QStringLiteral("did:agent:herd-lead");
    post(lead, "/lease", acquire(QStringLiteral("fs:src/main.rs"), 30'000));
    after(300, [this] {
        for (int i = 0; i < kHerd; ++i)
            herdMember(herdDid(i), 0);
    });
    after(4000, [=, this] { post(lead, "/release", {}); });
    after(40'000, [this] { herdScene(); });
}

void DemoTraffic::herdMember(const QString &did, int attempt)
{
    if (attempt > 40)
        return;
    post(did, "/lease", acquire(QStringLiteral("fs:src/main.rs"), 10'000),
         [=, this](int status, const QJsonObject &body) {
             if (status == 200)
                 return after(150, [=, this] { post(did, "/release", {}); });
             const int backoff = backoffOf(body);
             after(backoff + int(m_random() % unsigned(backoff + 1)),
                   [=, this] { herdMember(did, attempt + 1); });
         });
}

// Steady work: take a path (now and then only to read), sometimes pin it while "writing",
// hold it a moment, release.
void DemoTraffic::worker(const QString &did)
{
    static const QStringList paths = {
        "fs:src/app/main.cpp",     "fs:src/app/options.cpp",   "fs:src/engine/table.cpp",
        "fs:src/engine/waits.cpp", "fs:src/ui/window.cpp",     "fs:docs/guide.md",
        "fs:docs/api.md",          "fs:tests/engine_test.cpp", "fs:README.md",
        "lock:ci/runner-1",        "lock:ci/runner-2",         "fs:assets/icon.svg"};
    const QString path = paths.at(int(m_random() % unsigned(paths.size())));
    const bool read = m_random() % 4 == 0;
    const int hold = 500 + int(m_random() % 3500);
    post(did, "/lease", acquire(path, 30'000, 0, read ? "read" : "write"),
         [=, this](int status, const QJsonObject &body) {
             if (status != 200)
                 return after(backoffOf(body) + 200, [=, this] { worker(did); });
             const QString leaseId = body.value("lease").toObject().value("leaseId").toString();
             if (!read && m_random() % 3 == 0) {
                 post(did, "/pin", {{"leaseId", leaseId}}, [=, this](int, const QJsonObject &p) {
                     const QString pinId = p.value("pin").toObject().value("pinId").toString();
                     after(hold / 2, [=, this] { post(did, "/unpin", {{"pinId", pinId}}); });
                 });
             }
             after(hold, [=, this] {
                 post(did, "/release", {{"resource", path}}, [=, this](int, const QJsonObject &) {
                     after(300, [=, this] { worker(did); });
                 });
             });
         });
}
