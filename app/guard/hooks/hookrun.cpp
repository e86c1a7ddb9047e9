#include "hookrun.h"

#include "hookstate.h"
#include "hookwords.h"
#include "refusallog.h"
#include "shellwrites.h"
#include "workspacepaths.h"

#include <QDateTime>
#include <QDir>
#include <QEventLoop>
#include <QFileInfo>
#include <QPointer>
#include <QRegularExpression>

using nlohmann::json;

namespace {

const QString kBase = QLatin1String(ServiceClient::kBase);
// A release or a renewal is one quick request: Codex kills its SessionEnd hook within about a
// second, so nothing comes before the release and nothing waits long after it.
constexpr qint64 kQuickMs = 3'000;

qint64 nowMs()
{
    return QDateTime::currentMSecsSinceEpoch();
}

} // namespace

HookRun::HookRun(const HookDialect &dialect, QByteArray input, Settings settings, QObject *parent)
    : QObject(parent)
    , m_dialect(dialect)
    , m_input(std::move(input))
    , m_settings(std::move(settings))
{
    m_deadline.setSingleShot(true);
}

HookRun::~HookRun() = default;

QString HookRun::sessionAgent(const QString &dialect, const QString &session)
{
    QString name = session;
    name.remove(QRegularExpression(QStringLiteral("[^A-Za-z0-9-]")));
    return QStringLiteral("did:agent:%1%2")
        .arg(dialect, name.isEmpty() ? QString() : QLatin1Char('-') + name.left(64));
}

HookAnswer HookRun::runNow(const HookDialect &dialect, const QByteArray &input, Settings settings)
{
    HookRun run(dialect, input, std::move(settings));
    QEventLoop loop;
    QObject::connect(&run, &HookRun::finished, &loop, &QEventLoop::quit);
    run.start();
    if (!run.isFinished())
        loop.exec();
    return run.answer();
}

HookAnswer HookRun::cannotJudge(const HookDialect &dialect, const Settings &settings,
                                const QString &why)
{
    // No event to answer: answered as a pre-tool event would be.
    HookEvent e;
    e.kind = HookEvent::Kind::PreTool;
    e.eventName = settings.eventName.isEmpty() ? QStringLiteral("PreToolUse") : settings.eventName;
    const QString sentence = QStringLiteral("Leasehold: %1; nothing was checked").arg(why);
    return settings.strict ? dialect.deny(e, sentence + QStringLiteral(" (--strict)."))
                           : dialect.warn(e, sentence + QLatin1Char('.'));
}

void HookRun::start()
{
    const json in = json::parse(m_input.begin(), m_input.end(), nullptr, false);
    std::optional<HookEvent> event = m_dialect.parse(in, m_settings.eventName);
    if (!event)
        return finish(
            cannotJudge(m_dialect, m_settings,
                        QStringLiteral("stdin is not a %1 hook event").arg(m_dialect.name())));
    m_event = std::move(*event);
    if (m_settings.service.key.isEmpty() && m_settings.service.agent.isEmpty())
        m_settings.service.agent = sessionAgent(m_dialect.name(), m_event.session);
    m_root = m_settings.root;
    for (const QString &variable : m_dialect.projectDirVariables()) {
        if (m_root.isEmpty())
            m_root = qEnvironmentVariable(variable.toUtf8().constData());
    }
    if (m_root.isEmpty())
        m_root = m_event.cwd;
    if (m_root.isEmpty())
        m_root = QDir::currentPath();
    connect(&m_deadline, &QTimer::timeout, this, [this] {
        m_service.reset(); // aborts what is in flight: a parked wait ends and takes nothing
        if (m_event.kind == HookEvent::Kind::PreTool)
            return unjudged(QStringLiteral("no answer within %1")
                                .arg(hookwords::duration(m_deadline.interval())));
        finish(m_dialect.allow(m_event));
    });
    switch (m_event.kind) {
    case HookEvent::Kind::PreTool:
        return preTool();
    case HookEvent::Kind::PostTool:
        return postTool();
    case HookEvent::Kind::Stop:
    case HookEvent::Kind::SessionEnd:
        return release();
    case HookEvent::Kind::Other:
        break;
    }
    finish(m_dialect.allow(m_event));
}

QString HookRun::absolute(const QString &path) const
{
    if (QDir::isAbsolutePath(path) || path.startsWith(QLatin1String("~/")) ||
        path.startsWith(QLatin1String("file://")))
        return path;
    return QDir(m_event.cwd.isEmpty() ? m_root : m_event.cwd).absoluteFilePath(path);
}

QStringList HookRun::names() const
{
    QStringList paths = m_event.files;
    if (m_event.isShell()) {
        paths += shellwrites::files(
            m_event.command, [this](const QString &p) { return QFileInfo(absolute(p)).isDir(); });
    }
    const WorkspacePaths workspace(m_root);
    QStringList out;
    for (const QString &path : paths) {
        const WorkspacePaths::Named named = workspace.name(absolute(path));
        // Outside the root nobody's lease covers it; the root itself is the whole workspace,
        // which a command rewriting everything leaves to the filesystem gate.
        if (named.judged() && named.name != QLatin1String("fs:.") && !out.contains(named.name))
            out << named.name;
    }
    return out;
}

QString HookRun::callKey() const
{
    return m_event.callId.isEmpty() ? m_event.fingerprint : m_event.callId;
}

void HookRun::preTool()
{
    if (m_event.isShell() && !m_settings.runFolder.isEmpty())
        HookState(m_settings.stateFolder)
            .rememberStart(m_dialect.name(), m_event.session, callKey(), nowMs());
    const QStringList resources = names();
    if (resources.isEmpty())
        return finish(m_dialect.allow(m_event));
    json names = json::array();
    for (const QString &r : resources)
        names.push_back(r.toStdString());
    const qint64 wait = std::max<qint64>(0, m_settings.waitMs);
    post(QStringLiteral("/lease"),
         {{"resources", names},
          {"mode", "write"},
          {"ttlMs", m_settings.ttlMs},
          {"waitMs", wait},
          {"waitWhileHolding", true},
          {"wording", "tool"}},
         wait + m_settings.slackMs, [this](const ServiceClient::Reply &r) {
             // Claude Code reads context before a tool too; the others hear of release
             // requests after it (postTool), where each reads added context.
             const QString asked = m_dialect.name() == QLatin1String("claude-code")
                                       ? hookwords::releaseRequests(r.body, nowMs())
                                       : QString();
             if (r.status == 200)
                 return finish(asked.isEmpty() ? m_dialect.allow(m_event)
                                               : m_dialect.addContext(m_event, asked));
             const QString reason = hookjson::text(r.body, "reason");
             if ((r.status == 409 || r.status == 403) && !reason.isEmpty() &&
                 reason != QLatin1String("store_unavailable"))
                 return finish(m_dialect.deny(m_event, hookwords::denial(m_event, r.body)));
             unjudged(r.explanation());
         });
}

void HookRun::postTool()
{
    QString context;
    if (m_event.isShell() && !m_settings.runFolder.isEmpty()) {
        const qint64 now = nowMs();
        std::optional<qint64> since = HookState(m_settings.stateFolder)
                                          .takeStart(m_dialect.name(), m_event.session, callKey());
        if (!since)
            since = m_event.durationMs >= 0 ? now - m_event.durationMs - 1'000 : now - 60'000;
        std::vector<leasehold::fsgate::Refusal> during;
        for (leasehold::fsgate::Refusal &r :
             leasehold::fsgate::RefusalLog::read(QDir(m_settings.runFolder)
                                                     .filePath(QStringLiteral("refusals.jsonl"))
                                                     .toStdString(),
                                                 *since)) {
            if (r.at <= now)
                during.push_back(std::move(r));
        }
        context = hookwords::gateReport(during, now);
    }
    const QStringList resources = m_event.failed ? QStringList() : names();
    auto answer = [this, context](const QString &asked = {}) {
        const QString text = context.isEmpty() || asked.isEmpty()
                                 ? context + asked
                                 : context + QLatin1Char('\n') + asked;
        finish(text.isEmpty() ? m_dialect.allow(m_event) : m_dialect.addContext(m_event, text));
    };
    if (resources.isEmpty())
        return answer();
    json names = json::array();
    for (const QString &r : resources)
        names.push_back(r.toStdString());
    // Asking again for what the agent holds extends it (same lease, new expiry).
    post(
        QStringLiteral("/lease"),
        {{"resources", names}, {"mode", "write"}, {"ttlMs", m_settings.ttlMs}, {"wording", "tool"}},
        kQuickMs, [answer](const ServiceClient::Reply &r) {
            answer(hookwords::releaseRequests(r.body, nowMs()));
        });
}

void HookRun::release()
{
    post(QStringLiteral("/release"), json::object(), kQuickMs,
         [this](const ServiceClient::Reply &r) {
             HookAnswer a = m_dialect.allow(m_event);
             if (r.status != 200)
                 a.err = "leasehold hook: could not release: " + r.explanation().toUtf8() + '\n';
             finish(std::move(a));
         });
    HookState(m_settings.stateFolder).forgetSession(m_dialect.name(), m_event.session);
}

void HookRun::unjudged(const QString &why)
{
    const QString sentence =
        hookwords::unjudged(m_event, m_settings.service.base.toString(), why, m_settings.strict);
    finish(m_settings.strict ? m_dialect.deny(m_event, sentence)
                             : m_dialect.warn(m_event, sentence));
}

void HookRun::post(const QString &route, json body, qint64 deadlineMs,
                   std::function<void(const ServiceClient::Reply &)> done)
{
    ServiceClient::Settings service = m_settings.service;
    service.timeoutMs = int(std::min<qint64>(deadlineMs, 600'000));
    m_service = std::make_unique<ServiceClient>(service);
    m_deadline.start(int(std::min<qint64>(deadlineMs, 600'000)));
    QPointer<HookRun> self(this);
    m_service->post(kBase + route, std::move(body),
                    [self, done = std::move(done)](ServiceClient::Reply r) {
                        if (self && !self->m_finished)
                            done(r);
                    });
}

void HookRun::finish(HookAnswer answer)
{
    if (m_finished)
        return;
    m_finished = true;
    m_deadline.stop();
    m_answer = std::move(answer);
    emit finished();
}
