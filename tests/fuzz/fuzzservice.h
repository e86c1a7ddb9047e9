#pragma once

// The service the request targets drive, one per input so that an input replays alone exactly
// as it ran: an engine host on a manual clock and the HTTP front with three keys (agents a and
// b, admin alice), serving in process through HttpFront::serve — the transport's own entry
// point after it has read a request — or, for the byte-stream target, on 127.0.0.1 port 0.
//
// Requests come in a small text form, so seeds can be written from the tests' own requests
// and read by a person (docs: tests/fuzz/README.md):
//
//   POST /api/v1/acp/coordination/lease?wait=0
//   Authorization: Bearer $a
//   X-Fuzz-Advance: 5000
//
//   {"resources":["fs:src/a.ts"]}
//   ====
//   (the next request)
//
// In header values `$a`, `$b` and `$admin` stand for the three keys and `$session` for the
// MCP session the last answer opened; X-Fuzz-Advance moves the clock after the request.

#include "enginehost.h"
#include "httpfront.h"

#include <QTemporaryDir>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace leasehold::fuzz {

// Aborts, printing `what` and `detail`: the finding libFuzzer keeps.
[[noreturn]] void fail(const char *what, const std::string &detail = {});

// A QCoreApplication for the timers, sockets and event loop; made once, on first use.
void ensureApplication();

// Runs the event loop until `done()` holds; fails with `what` if that takes over five seconds
// (a hang, which libFuzzer would otherwise only report after its own -timeout).
void pumpUntil(const std::function<bool()> &done, const char *what);

struct FuzzRequest
{
    RestCall call;
    std::int64_t advanceMs = 0;
};

// The requests in `data` (at most `maxRequests`); `forcedPath` replaces each one's path.
std::vector<FuzzRequest> parseRequests(const std::uint8_t *data, std::size_t size,
                                       const QString &forcedPath = {},
                                       std::size_t maxRequests = 16);

class FuzzService
{
public:
    // `workspace`: give the service a scratch workspace root with a few files (the fs_* tools).
    explicit FuzzService(bool workspace = false);
    ~FuzzService();

    // Serves `request` and checks its answer (and any answered later) as it goes out: never a
    // 5xx, every refusal JSON that says why. Checks the engine's invariants after it.
    void serve(FuzzRequest request);
    // The end of an input: clients of answers still pending leave, the clock moves past every
    // deadline, and nothing may be left: no lease, wait or pin outlives its deadline.
    void finish();

    quint16 listen();
    HttpFront &front() { return *m_front; }
    // The scratch workspace's canonical root (empty without one).
    QString workspaceRoot() const;
    // The key of agent 'a' or 'b', or of the admin ('o').
    static QByteArray key(char who);
    EngineHost &host() { return *m_host; }

private:
    void substitute(RestCall &call) const;
    void check(const HttpReply &reply, const RestCall &call) const;
    void checkEngine() const;

    ManualClock m_clock{1'800'000'000'000};
    std::unique_ptr<QTemporaryDir> m_workspace;
    std::unique_ptr<EngineHost> m_host;
    std::unique_ptr<HttpFront> m_front;
    QByteArray m_session;
    // Answers not yet sent: the client's leaving, for finish() to call.
    std::vector<std::shared_ptr<std::function<void()>>> m_pending;
};

} // namespace leasehold::fuzz
