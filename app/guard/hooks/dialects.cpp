#include "dialects.h"

// The registry: the only file that names every dialect, so the dialects depend on the core
// (hookdialect.cpp, hookjson.cpp) and nothing in the core depends on them.

const HookDialect *HookDialect::find(const QString &name)
{
    for (const HookDialect *d : {&claudeCodeDialect(), &codexDialect(), &geminiDialect(),
                                 &copilotDialect(), &qwenDialect(), &opencodeDialect()}) {
        if (d->name() == name)
            return d;
    }
    return nullptr;
}

QStringList HookDialect::names()
{
    return {QStringLiteral("claude-code"), QStringLiteral("codex"), QStringLiteral("gemini"),
            QStringLiteral("copilot"),     QStringLiteral("qwen"),  QStringLiteral("opencode")};
}
