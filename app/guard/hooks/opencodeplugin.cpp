#include "opencodeplugin.h"

#include <nlohmann/json.hpp>

namespace opencodeplugin {

namespace {

constexpr const char *kMarker = "leasehold-opencode-plugin";

// The plugin; @COMMAND@ and @LIMIT_MS@ are filled in. It imports only node's child_process,
// which opencode's runtime provides, so it needs no package installed.
constexpr const char *kTemplate =
    R"JS(// Leasehold's hooks for opencode (leasehold-opencode-plugin 1), written by
// `leasehold ctl install-hooks opencode`, which replaces this file when run again.
// Before each edit, write, patch or shell call it asks Leasehold: a file another agent holds
// makes the call wait for it; a wait that runs out stops the call, naming the holder.
import { spawn } from "node:child_process"

const COMMAND = @COMMAND@
const LIMIT_MS = @LIMIT_MS@
const GUARDED = new Set(["edit", "write", "multiedit", "apply_patch", "patch", "bash"])

// Runs the hook with one event on stdin; resolves to its answer (an object), never rejects.
function ask(event) {
  return new Promise((resolve) => {
    const fail = (why) => resolve({ warning: `Leasehold: the hook ${why}; the call goes ahead unguarded.` })
    let child
    try {
      child = spawn(COMMAND[0], COMMAND.slice(1), { stdio: ["pipe", "pipe", "pipe"] })
    } catch (e) {
      return fail(`could not start (${e.message})`)
    }
    let out = ""
    let err = ""
    const timer = setTimeout(() => child.kill("SIGKILL"), LIMIT_MS)
    child.stdout.on("data", (d) => { out += d })
    child.stderr.on("data", (d) => { err += d })
    child.on("error", (e) => { clearTimeout(timer); fail(`could not start (${e.message})`) })
    child.on("close", () => {
      clearTimeout(timer)
      try {
        resolve(JSON.parse(out || "{}"))
      } catch {
        fail(`answered no JSON (${(out + err).trim().slice(0, 200)})`)
      }
    })
    child.stdin.on("error", () => {})
    child.stdin.end(JSON.stringify(event))
  })
}

export const Leasehold = async ({ directory }) => {
  const parents = new Map() // a sub-agent's session -> the session that started it
  const root = (id) => {
    let s = id
    for (let i = 0; i < 64 && parents.has(s); ++i) s = parents.get(s)
    return s
  }
  const tell = (answer) => { if (answer.warning) console.error(answer.warning) }
  return {
    "tool.execute.before": async (input, output) => {
      if (!GUARDED.has(input.tool)) return
      const answer = await ask({ hook_event_name: "tool.execute.before", session_id: root(input.sessionID),
                                 call_id: input.callID, tool: input.tool, args: output.args, cwd: directory })
      if (answer.decision === "deny") throw new Error(answer.reason)
      tell(answer)
    },
    "tool.execute.after": async (input, output) => {
      if (!GUARDED.has(input.tool)) return
      const answer = await ask({ hook_event_name: "tool.execute.after", session_id: root(input.sessionID),
                                 call_id: input.callID, tool: input.tool, args: input.args, cwd: directory })
      if (answer.context && output && typeof output.output === "string") output.output += "\n\n" + answer.context
      tell(answer)
    },
    event: async ({ event }) => {
      const info = event.properties && event.properties.info
      if (event.type === "session.created" && info && info.parentID) parents.set(info.id, info.parentID)
      if (event.type === "session.idle" && !parents.has(event.properties.sessionID))
        tell(await ask({ hook_event_name: "session.idle", session_id: event.properties.sessionID, cwd: directory }))
    },
  }
}
)JS";

} // namespace

QByteArray source(const QStringList &command, int limitMs)
{
    nlohmann::json argv = nlohmann::json::array();
    for (const QString &a : command)
        argv.push_back(a.toStdString());
    QByteArray text(kTemplate);
    text.replace("@COMMAND@", QByteArray::fromStdString(argv.dump()));
    text.replace("@LIMIT_MS@", QByteArray::number(limitMs));
    return text;
}

bool isOurs(const QByteArray &text)
{
    return text.contains(kMarker);
}

} // namespace opencodeplugin
