#pragma once

#include "centralmcp.h"
#include "serviceclient.h"
#include "toolpolicy.h"
#include "workspacepaths.h"

#include <QElapsedTimer>
#include <QObject>

#include <nlohmann/json.hpp>

#include <functional>
#include <map>
#include <memory>
#include <string>

// `leasehold guard mcp`: the lease layer in front of an agent's own MCP server. Everything the
// client says goes to the inner server and back, except:
//
// - tools/list: an inner tool called lock_acquire, lock_release or lock_status is dropped, and
//   (unless publishing is off) the central Leasehold's own three are added;
// - lock_acquire / lock_release / lock_status go to the central Leasehold over MCP, under the
//   agent's key, with their paths named as the service names them; a notifications/cancelled
//   from the client cancels a parked lock_acquire;
// - an enforced tool (ToolPolicy) has its paths named and checked (POST /check) first: another
//   agent's lease refuses it with the holder's sentence; while more than one agent is live it
//   must be covered by this agent's write lease ("another agent is live; lock_acquire first");
//   the covering leases are pinned while the inner call runs. When the service cannot be asked
//   the call is refused (fail closed). A path outside the root passes with a leases-warning
//   in an object result, unless strict;
// - in a JSON-RPC batch the lock calls settle first, in order, before the rest are sent on.
//
// Every failure — the service down, the inner server gone, a malformed call — is one result
// with isError (or, for a request that is not a tool call, one JSON-RPC error) in the caller's
// order: nothing throws and nothing is left unanswered.
class McpGuard : public QObject
{
    Q_OBJECT

public:
    struct Settings
    {
        ServiceClient::Settings service; // via "guard"
        QString root;
        ToolPolicy policy;
        bool publishTools = true;
        bool alwaysStrict = false; // --strict: every change covered by a lease, however many live
        // An agent that only reads through the guard still says it is live this often (the
        // service's live window is minutes), so the others stay strict while it works.
        int presenceEveryMs = 60'000;
    };
    using Send = std::function<void(const nlohmann::json &)>;

    McpGuard(Settings settings, Send toClient, Send toInner, QObject *parent = nullptr);

    void fromClient(const nlohmann::json &message);
    void fromInner(const nlohmann::json &message);
    // The inner server is gone: every call waiting for it is answered, and later ones at once.
    void innerDied(const QString &why);

private:
    using Reply = std::function<void(nlohmann::json response)>;
    // A client request waiting for the inner server's answer, and what to do with it first.
    struct InnerCall
    {
        Reply reply;
        std::function<nlohmann::json(nlohmann::json response)> adjust;
        bool toolCall = false;
    };

    void takeFromClient(const nlohmann::json &message);
    void request(const nlohmann::json &message, Reply reply);
    struct BatchRun;
    void batch(const nlohmann::json &messages);
    Reply batchAnswer(const std::shared_ptr<BatchRun> &run, std::size_t slot);
    void runBatch(const std::shared_ptr<BatchRun> &run, std::size_t lock);
    void forward(const nlohmann::json &message, Reply reply,
                 std::function<nlohmann::json(nlohmann::json)> adjust = {}, bool toolCall = false);
    void listTools(const nlohmann::json &message, Reply reply);
    void lockCall(const nlohmann::json &message, Reply reply);
    void guardedCall(const nlohmann::json &message, Reply reply);
    void withLockTools(std::function<void(const nlohmann::json &tools)> then);
    void unpin(const nlohmann::json &pins);
    // Tells the service the agent is here, when it has not heard from this guard for a while.
    void keepPresent();

    Settings m_settings;
    WorkspacePaths m_paths;
    Send m_toClient;
    Send m_toInner;
    ServiceClient m_service;
    CentralMcp m_central;
    std::map<std::string, InnerCall> m_inner;  // by the request id (dumped)
    std::map<std::string, qint64> m_lockCalls; // client request id -> central call id
    QString m_innerDead;                       // why, once the inner server is gone
    nlohmann::json m_lockTools;                // the central's lock_* definitions, once known
    std::vector<std::function<void(const nlohmann::json &)>> m_waitingForTools;
    bool m_fetchingTools = false;
    QElapsedTimer m_sinceContact; // since the service last heard from this guard
};
