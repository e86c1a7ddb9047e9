#pragma once

#include "hookdialect.h"

// The dialects, one file each: claudecodehook.cpp (Claude Code, and the reader Qwen Code,
// Codex and Gemini CLI share), qwenhook.cpp, codexhook.cpp, geminihook.cpp, copilothook.cpp,
// opencodehook.cpp. Each is a function-local static, built on first use.
const HookDialect &claudeCodeDialect();
const HookDialect &qwenDialect();
const HookDialect &codexDialect();
const HookDialect &geminiDialect();
const HookDialect &copilotDialect();
const HookDialect &opencodeDialect();
