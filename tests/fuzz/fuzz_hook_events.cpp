// Claude Code hook events from outside bytes, as `leasehold hook claude-code` reads them on
// stdin (HookRun, without waiting): the event's JSON, its tool input and the file path in it,
// resolved against a scratch workspace (`$root` in the input stands for its path), answered by
// a real service on 127.0.0.1 port 0 where agent b holds fs:src/held.ts. Asserted:
//   - the hook exits 0; whatever it prints on stdout is one JSON object, and a permission
//     decision in it is allow, deny or ask;
//   - an edit of the file agent b holds is denied, naming b;
//   - the engine's invariants hold, and nothing outlives its deadline (fuzzservice.h).

#include "dialects.h"
#include "fuzzservice.h"
#include "hookrun.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <string>

using namespace leasehold;
using namespace leasehold::fuzz;
using nlohmann::json;

namespace {

// Whether `event` asks to edit src/held.ts by its plain absolute path.
bool editsHeld(const json &event, const QString &root)
{
    if (!event.is_object() || event.value("hook_event_name", json()) != "PreToolUse")
        return false;
    const json tool = event.value("tool_name", json());
    if (tool != "Edit" && tool != "Write" && tool != "MultiEdit")
        return false;
    const json input = event.value("tool_input", json());
    return input.is_object() && input.value("file_path", json()) ==
                                    (root + QStringLiteral("/src/held.ts")).toStdString();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    FuzzService service(/*workspace=*/true);
    const QString root = service.workspaceRoot();
    FuzzRequest hold;
    hold.call.method = "POST";
    hold.call.path = QStringLiteral("/api/v1/acp/coordination/lease");
    hold.call.headers.append({"Authorization", "Bearer " + FuzzService::key('b')});
    hold.call.body = R"({"resource":"fs:src/held.ts","ttlMs":600000})";
    service.serve(std::move(hold));

    const quint16 port = service.listen();
    QByteArray event(reinterpret_cast<const char *>(data), qsizetype(size));
    event.replace("$root", root.toUtf8());
    HookRun::Settings settings;
    settings.service.base = QUrl(QStringLiteral("http://127.0.0.1:%1").arg(port));
    settings.service.key = FuzzService::key('a');
    settings.service.via = "hook";
    settings.root = root;
    settings.waitMs = 0; // the service's clock does not move here: a held file is denied at once
    settings.stateFolder = root + QStringLiteral("/.hookstate");
    const HookAnswer answer = HookRun::runNow(claudeCodeDialect(), event, settings);

    if (answer.exitCode != 0)
        fail("the hook exited non-zero", std::to_string(answer.exitCode));
    const json in = json::parse(event.begin(), event.end(), nullptr, false);
    if (!answer.out.isEmpty()) {
        const json out = json::parse(answer.out.begin(), answer.out.end(), nullptr, false);
        if (!out.is_object())
            fail("the hook printed something that is not one JSON object",
                 answer.out.toStdString());
        const json decision =
            out.value("hookSpecificOutput", json::object()).value("permissionDecision", json());
        if (!decision.is_null() && decision != "allow" && decision != "deny" && decision != "ask")
            fail("an unknown permission decision", answer.out.toStdString());
    }
    if (editsHeld(in, root)) {
        const json out = json::parse(answer.out.begin(), answer.out.end(), nullptr, false);
        const json hook =
            out.is_object() ? out.value("hookSpecificOutput", json::object()) : json();
        if (!hook.is_object() || hook.value("permissionDecision", json()) != "deny" ||
            hook.value("permissionDecisionReason", std::string()).find("did:agent:b") ==
                std::string::npos)
            fail("an edit of a file another agent holds was not denied naming the holder",
                 answer.out.toStdString());
    }
    service.finish();
    return 0;
}
