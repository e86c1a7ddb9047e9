#pragma once

#include "hookevent.h"

#include <nlohmann/json.hpp>

#include <vector>

namespace leasehold::fsgate {
struct Refusal;
}

// The sentences the hooks write for a model (denials, the gate's refusals after a command) and
// for the user (warnings). A model reads them in place of its tool's result, so each says what
// happened to the call, who is in the way, and the next move that works from inside a hook:
// the model cannot release or wait for a lease itself, only work elsewhere or come back later.
//
// Pure functions; any thread.
namespace hookwords {

// "40 s", "4 min 20 s", "1 h 5 min" (the service's own way of writing a duration).
QString duration(qint64 ms);
// What the call was, for a sentence: "Edit of src/a.ts", "command `sed -i ... src/a.ts`".
QString call(const HookEvent &event);
// The denial of a call the service refused: `body` is its refusal (lease_held after a wait,
// deadlock naming the cycle, suspended, ...).
QString denial(const HookEvent &event, const nlohmann::json &body);
// The instance could not judge the call: `why`; whether it goes ahead is `strict`'s.
QString unjudged(const HookEvent &event, const QString &instance, const QString &why, bool strict);
// The filesystem gate's refusals during a shell command, for the model; empty for none.
QString gateReport(const std::vector<leasehold::fsgate::Refusal> &refusals, qint64 nowMs);
// The release requests a service reply carries (`releaseRequests`: others asking the agent to
// let a lease go), for the model; empty for none.
QString releaseRequests(const nlohmann::json &body, qint64 nowMs);

} // namespace hookwords
