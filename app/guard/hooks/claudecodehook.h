#pragma once

#include "serviceclient.h"

#include <QByteArray>
#include <QString>

// `leasehold hook claude-code`: one Claude Code hook event (JSON on stdin) answered as Claude
// Code's hooks reference describes.
//
//   PreToolUse of Edit, Write, MultiEdit or NotebookEdit on a path inside the root: take or
//     extend this agent's write lease on the file (never waiting). Another agent's lease denies
//     the call: hookSpecificOutput.permissionDecision "deny", with the service's sentence naming
//     the holder as permissionDecisionReason, which the model reads and acts on.
//   PostToolUse of those tools: extend the lease again (the edit is done; the claim stands).
//   Stop (the turn ended) and SessionEnd: release everything the agent holds, so no lease is
//     left to expire against the agent's trust.
//
// The agent is the key's DID; with an --open instance and no --agent, one derived from the
// session ("did:agent:claude-code-<session>"). When the instance cannot be reached the edit goes
// ahead with a warning to the user (systemMessage), or with `strict` is denied.
struct ClaudeCodeHook
{
    struct Settings
    {
        ServiceClient::Settings service; // via "hook"; agent may be empty (see above)
        QString root;                    // empty: $CLAUDE_PROJECT_DIR, else the event's cwd
        qint64 ttlMs = 600'000;
        bool strict = false;
    };
    struct Answer
    {
        int exitCode = 0;
        QByteArray out; // for stdout
        QByteArray err; // for stderr
    };

    static Answer run(const QByteArray &event, Settings settings);
    // The agent an --open instance knows this session as.
    static QString sessionAgent(const QString &sessionId);
};
