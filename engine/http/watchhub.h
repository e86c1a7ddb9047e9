#pragma once

#include "agentpresence.h"
#include "enginehost.h"
#include "restapi.h"

#include <QElapsedTimer>
#include <QObject>
#include <QTimer>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace leasehold {

// GET /watch: the lease table and the ledger as one stream of server-sent events, as etcd's
// watch serves keys (docs/protocol.md, "The watch stream"). A watcher first gets the current
// leases whose names start with its prefix as one `snapshot` at a ledger revision, or, when it
// resumes (Last-Event-ID or ?since=) and the ring still holds everything after that revision,
// a `resumed` marker and the events it missed; then every event after it, in order, each with
// its sequence number as the SSE id. `heartbeat` events carry the revision reached, so a
// client resumes from there and notices a dead peer by their absence.
//
// Only what the store made durable is sent (a grant a crash could undo is never seen, and
// a revision a client saw is never reused): events wait for the store's next commit, one
// durability ticket per turn of the engine's loop however many watchers there are. Each event
// is encoded once for all. A watcher whose client stops reading is cut off once the bytes
// waiting for it pass `maxBacklogBytes` (a last `cut` event says why), so a slow client costs
// the engine a bounded buffer and never a wait. Snapshots are encoded on a worker thread.
//
// Thread: the engine thread (the host's).
class WatchHub : public QObject
{
    Q_OBJECT

public:
    struct Options
    {
        std::int64_t heartbeatMs = 10'000; // unless the request asks for another
        qint64 maxBacklogBytes = 8 << 20;  // unread by one client, before it is cut off
    };
    struct Stats
    {
        std::uint64_t opened = 0;
        std::uint64_t resumed = 0;   // served from the ring, no snapshot
        std::uint64_t snapshots = 0; // fresh snapshots (new watchers, and resumes that could not)
        std::uint64_t cutSlow = 0;   // cut off for not reading
        std::uint64_t events = 0;    // event frames written, all watchers together
    };

    // `presence`, when given, counts a watch that a guard opened for its agent (X-Leasehold-Via:
    // fs, ...) as a live session of that agent on that surface, while it is open.
    WatchHub(EngineHost &host, Options options, AgentPresence *presence = nullptr,
             bool open = false, QObject *parent = nullptr);
    ~WatchHub() override;

    // Serves GET /watch: `prefix`, `events` (leases|all), `since` or Last-Event-ID,
    // `heartbeatMs`, `snapshot` (false: no snapshot on a fresh start, events from now).
    void serve(const RestCall &call, const Respond &respond, Deferral &deferral);
    std::size_t watchers() const { return m_watchers.size(); }
    const Stats &stats() const { return m_stats; }
    // Ends every stream with a `cut` event naming `reason` (the service stops, or stands by).
    void closeAll(const std::string &reason);

private:
    struct Watcher
    {
        std::string prefix;
        bool all = false; // every ledger event, not only the lease changes
        std::int64_t heartbeatMs = 0;
        std::shared_ptr<EventStream> stream;
        std::uint64_t from = 0;       // events up to here are in its first frames already
        bool ready = false;           // its first frames went out
        std::vector<QByteArray> held; // frames that came while its snapshot was encoded
        qint64 heldBytes = 0;
        QElapsedTimer quiet; // since its last frame
        std::string agent;   // a guard's agent, counted as live (else empty)
        Via via = Via::Rest;
    };
    bool wants(const Watcher &w, const LedgerEvent &event) const;
    void recorded(const LedgerEvent &event);
    // Arms one durability ticket for the events pending now.
    void armDelivery();
    void deliver(std::uint64_t upTo);
    // Writes `frame` to the watcher's client, or holds it until its first frames are out; false
    // when the watcher is done (cut off for its backlog, or disconnected).
    bool write(Watcher &w, const QByteArray &frame);
    void start(std::uint64_t id, std::vector<QByteArray> first);
    void cut(std::uint64_t id, const std::string &reason);
    void heartbeat();
    // Forgets watcher `it`, and its session in the agent's presence.
    void erase(std::map<std::uint64_t, Watcher>::iterator it);
    void erase(std::uint64_t id);
    void countSession(const Watcher &w, int delta);

    EngineHost &m_host;
    Options m_options;
    AgentPresence *m_presence;
    bool m_open;
    std::map<std::pair<std::string, Via>, int> m_sessions; // guards' watches per agent
    std::map<std::uint64_t, Watcher> m_watchers;
    std::uint64_t m_nextId = 1;
    std::vector<LedgerEvent> m_pending; // recorded while someone watches, not yet durable
    bool m_armed = false;
    std::uint64_t m_delivered = 0; // the last revision sent on (durable)
    QTimer m_heartbeat;
    Stats m_stats;
};

} // namespace leasehold
