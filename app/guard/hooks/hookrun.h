#pragma once

#include "hookdialect.h"
#include "serviceclient.h"

#include <QObject>
#include <QTimer>

#include <memory>

// The hook core: one agent event (stdin of `leasehold hook NAME`), read by the agent's dialect,
// decided against the instance, answered in the dialect's words.
//
//   pre-tool  the files the call changes (named by the dialect; for a shell command, the plain
//             writes shellwrites.h reads) are named as the service names them (workspacepaths.h)
//             and taken as one write lease, all or nothing, with `waitMs`: a held file parks
//             the hook on the service's FIFO wait (waitWhileHolding: the agent may already hold
//             the files of its earlier edits), so the call goes ahead the moment the holder lets
//             go. Only a wait that ends without the lease denies the call, with the holder's
//             name; a wait that would close a cycle is denied at once, naming it.
//   post-tool the lease is extended (the claim stands while the agent works), and after a shell
//             command the filesystem gate's refusals during it (`runFolder`/refusals.jsonl, the
//             agent's `leasehold run`) are added to what the model reads.
//   stop, session end
//             everything the agent holds is released, first thing.
//
// It always answers, and before `waitMs + slackMs` (install-hooks sets the agent's own hook
// timeout above that): when the instance cannot be asked, does not answer in time, or the event
// cannot be read, the call goes ahead with a warning to the user, or with `strict` is denied.
// A wait that ends because the hook goes away (the agent was interrupted and killed it) takes
// nothing: the connection closes and the service cancels it.
//
// The agent is the key's DID; on an --open instance without --agent, one named after the
// session (sessionAgent()).
//
// Thread: the thread that made it, which must run an event loop.
class HookRun : public QObject
{
    Q_OBJECT

public:
    struct Settings
    {
        ServiceClient::Settings service; // via "hook"; agent may be empty (see above)
        QString root;      // empty: the agent's project folder variable, else the event's cwd
        QString eventName; // --event: for agents whose payload does not name it
        qint64 ttlMs = 600'000;
        qint64 waitMs = 20'000;
        qint64 slackMs = 5'000; // beyond waitMs, for starting, asking and answering
        bool strict = false;
        QString runFolder;   // $LEASEHOLD_RUN: the gate's run folder, "" when none
        QString stateFolder; // HookState's; "" for its default
    };

    HookRun(const HookDialect &dialect, QByteArray input, Settings settings,
            QObject *parent = nullptr);
    ~HookRun() override;

    void start();
    bool isFinished() const { return m_finished; }
    const HookAnswer &answer() const { return m_answer; }

    // The agent an --open instance knows a session as: "did:agent:<dialect>-<session>".
    static QString sessionAgent(const QString &dialect, const QString &session);
    // The answer when nothing could be judged (an unreadable event, a bad command line): `why`
    // as a warning, or with `strict` a denial.
    static HookAnswer cannotJudge(const HookDialect &dialect, const Settings &settings,
                                  const QString &why);
    // Runs one event to its answer in a local event loop: the command line's way.
    static HookAnswer runNow(const HookDialect &dialect, const QByteArray &input,
                             Settings settings);

signals:
    void finished();

private:
    void preTool();
    void postTool();
    void release();
    // The service names of what the call changes, inside the root, each once.
    QStringList names() const;
    QString absolute(const QString &path) const;
    // The instance could not judge the call: warn, or with --strict deny.
    void unjudged(const QString &why);
    void post(const QString &route, nlohmann::json body, qint64 deadlineMs,
              std::function<void(const ServiceClient::Reply &)> done);
    void finish(HookAnswer answer);
    // Where a pre-tool and a post-tool event of one call meet in HookState.
    QString callKey() const;

    const HookDialect &m_dialect;
    QByteArray m_input;
    Settings m_settings;
    HookEvent m_event;
    QString m_root;
    std::unique_ptr<ServiceClient> m_service;
    QTimer m_deadline;
    HookAnswer m_answer;
    bool m_finished = false;
};
