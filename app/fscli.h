#pragma once

#include <QStringList>

// The filesystem gate's command lines (docs/guard.md, "leasehold run"):
// `leasehold run [...] -- COMMAND [ARGS...]`: COMMAND with every change under the root gated.
int runRun(const QStringList &arguments);
// `leasehold guard fs --mount DIR --root DIR [...]`: the gate itself, serving a gated view.
int guardFs(const QStringList &arguments);
// `leasehold why [PATH]`: inside a run, what the gate refused lately and who holds it.
int runWhy(const QStringList &arguments);
