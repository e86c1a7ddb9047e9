#pragma once

#include "hookevent.h"
#include "hookjson.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <vector>

// One coding agent's hook dialect: how its events arrive on stdin and how it wants to be
// answered on stdout. A dialect reads an event into a HookEvent, naming the files the call will
// change (its edit tools' path fields, the paths inside a patch, a notebook's path) and a shell
// tool's command; the core (hookrun.h) decides; the dialect writes the decision in the agent's
// words: a denial the model reads, a warning the user sees, context added to a tool's result.
//
// Every answer exits 0: an agent lets a call through when its hook crashes or exits with an
// error, except Copilot CLI, which denies it - so an error exit would say something else than
// what was decided. A denial is always written as JSON (Copilot drops an exit-2 reason).
//
// The event is another program's output: any field may be missing or of any type. parse()
// never throws and never asserts on what it reads.
//
// Thread-safety: the dialects are immutable singletons (find()).
class HookDialect
{
public:
    virtual ~HookDialect() = default;

    // The name on the command line: "claude-code", "codex", "gemini", "copilot", "qwen",
    // "opencode".
    virtual QString name() const = 0;
    // The event in `input`; `eventName` is the event's name when the command line gave one
    // (`--event`, for agents whose payload does not say), else empty. Nothing when `input` is
    // none of this agent's hook events.
    virtual std::optional<HookEvent> parse(const nlohmann::json &input,
                                           const QString &eventName) const = 0;
    // The environment variables that name the agent's project folder, first set wins (the
    // workspace root when --root is not given).
    virtual QStringList projectDirVariables() const = 0;

    // The call goes ahead with nothing said (the agent's own permission flow goes on).
    virtual HookAnswer allow(const HookEvent &) const { return {}; }
    // The call is not made; the model reads `reason`.
    virtual HookAnswer deny(const HookEvent &event, const QString &reason) const = 0;
    // The call goes ahead; the user is told `message` (the hook could not judge it).
    virtual HookAnswer warn(const HookEvent &event, const QString &message) const = 0;
    // A post-tool answer: `text` is added to what the model reads of the call's result.
    virtual HookAnswer addContext(const HookEvent &event, const QString &text) const = 0;

    // The dialect called `name`, or nullptr (the registry: dialects.cpp).
    static const HookDialect *find(const QString &name);
    // Every dialect's name, in the order the docs list them.
    static QStringList names();
};
