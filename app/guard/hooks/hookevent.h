#pragma once

#include <QByteArray>
#include <QString>
#include <QStringList>

// One coding agent's hook event as the hook core (hookrun.h) sees it, whichever agent sent it:
// a tool call about to run or just run (the files it changes, a shell command), or a turn or a
// session that ended. Each agent's dialect (hookdialect.h) reads its events into this and
// writes the core's answers back in the agent's own format.
//
// Plain data; any thread.
struct HookEvent
{
    enum class Kind {
        PreTool,    // a tool call is about to run: it may be held back, or denied
        PostTool,   // a tool call ran (`failed` when it failed)
        Stop,       // the agent's turn ended
        SessionEnd, // the agent's session ended
        Other,      // nothing the hook guards (a session start, a prompt, a read, ...)
    };

    Kind kind = Kind::Other;
    QString eventName;      // the agent's own name for it: "PreToolUse", "BeforeTool", ...
    QString session;        // the agent's session id ("" when it gives none)
    QString callId;         // the tool call's id ("" when the agent gives none)
    QString tool;           // the tool's name as the agent calls it
    QStringList files;      // the files the call changes, as named: absolute or relative to `cwd`
    QString command;        // a shell tool's command line ("" for other tools)
    QString cwd;            // the event's working folder ("" when it gives none)
    bool failed = false;    // PostTool: the call failed
    qint64 durationMs = -1; // PostTool: how long the call ran, when the agent says
    // Stands in for `callId` where the agent gives none: the call's input, the same in its
    // pre-tool and post-tool events.
    QString fingerprint;

    bool isShell() const { return !command.isEmpty(); }
};

// What the hook process writes and how it exits.
struct HookAnswer
{
    int exitCode = 0;
    QByteArray out; // stdout
    QByteArray err; // stderr
};
