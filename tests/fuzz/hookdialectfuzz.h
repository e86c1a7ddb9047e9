#pragma once

// One agent's hook events from outside bytes, read by its dialect (app/guard/hooks) as
// `leasehold hook NAME` reads stdin - parsing only, in process, no service. An input that
// starts with "@NAME\n" gives the event's name as --event does (Copilot CLI's hooks). Asserted:
//   - parse() never crashes and an event it returns is consistent: a pre- or post-tool event
//     names a file or a shell command, every name is non-empty and holds no NUL;
//   - every answer of the dialect to it (allow, deny, warn, context) exits 0 - an agent such as
//     Copilot CLI denies a failing hook - and what it prints on stdout is empty or one line
//     holding one JSON object, with the reason given to it where the format carries one;
//   - the shell command (shellwrites.h) and any patch text yield paths without NUL or empties.

#include "applypatch.h"
#include "dialects.h"
#include "shellwrites.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace hookfuzz {

[[noreturn]] inline void fail(const char *what, const std::string &detail)
{
    std::fprintf(stderr, "hook dialect fuzz: %s\n  %s\n", what, detail.c_str());
    std::abort();
}

inline void checkAnswer(const HookAnswer &a, const char *which)
{
    if (a.exitCode != 0)
        fail("an answer exits non-zero", which);
    if (a.out.isEmpty())
        return;
    if (!a.out.endsWith('\n') || a.out.count('\n') != 1)
        fail("an answer is not one line", a.out.toStdString());
    const nlohmann::json j = nlohmann::json::parse(a.out.begin(), a.out.end(), nullptr, false);
    if (!j.is_object())
        fail("an answer is not one JSON object", a.out.toStdString());
}

inline void checkNames(const QStringList &names, const char *what)
{
    for (const QString &n : names) {
        if (n.isEmpty() || n.contains(QChar(0)))
            fail("an empty or NUL name", what);
    }
}

inline int run(const HookDialect &dialect, const std::uint8_t *data, std::size_t size)
{
    QByteArray input(reinterpret_cast<const char *>(data), qsizetype(size));
    QString eventName;
    if (input.startsWith('@')) {
        const qsizetype nl = input.indexOf('\n');
        eventName = QString::fromUtf8(input.mid(1, nl < 0 ? -1 : nl - 1));
        input = nl < 0 ? QByteArray() : input.mid(nl + 1);
    }
    const nlohmann::json j = nlohmann::json::parse(input.begin(), input.end(), nullptr, false);
    const std::optional<HookEvent> e = dialect.parse(j, eventName);
    if (!e)
        return 0;
    const bool tool = e->kind == HookEvent::Kind::PreTool || e->kind == HookEvent::Kind::PostTool;
    if (tool && e->files.isEmpty() && e->command.isEmpty())
        fail("a tool event names neither a file nor a command", input.toStdString());
    if (!tool && (!e->files.isEmpty() || !e->command.isEmpty()))
        fail("an event that is no tool call names files", input.toStdString());
    checkNames(e->files, "files");
    if (e->isShell())
        checkNames(shellwrites::files(e->command, [](const QString &) { return false; }),
                   "shell writes");
    const QString reason = QStringLiteral("held by did:agent:b \"quoted\" \xE2\x9C\x93");
    checkAnswer(dialect.allow(*e), "allow");
    checkAnswer(dialect.warn(*e, reason), "warn");
    checkAnswer(dialect.addContext(*e, reason), "context");
    const HookAnswer denied = dialect.deny(*e, reason);
    checkAnswer(denied, "deny");
    if (!denied.out.contains("did:agent:b"))
        fail("a denial does not carry its reason", denied.out.toStdString());
    return 0;
}

} // namespace hookfuzz
