#include "watchhub.h"

#include "did.h"
#include "jsonviews.h"

#include <QPointer>

#include <algorithm>
#include <limits>

namespace leasehold {

using nlohmann::json;

namespace {

bool changesLeases(EventKind kind)
{
    return kind == EventKind::Granted || kind == EventKind::Released || kind == EventKind::Expired;
}

QByteArray frame(const char *event, const json &data, std::optional<std::uint64_t> id)
{
    QByteArray out;
    if (id)
        out += "id: " + QByteArray::number(qulonglong(*id)) + '\n';
    out += "event: ";
    out += event;
    out += "\ndata: " + QByteArray::fromStdString(data.dump()) + "\n\n";
    return out;
}

QByteArray eventFrame(const LedgerEvent &event)
{
    return frame("ledger", toJson(event), event.seq);
}

bool startsWith(const std::string &name, const std::string &prefix)
{
    return name.size() >= prefix.size() && name.compare(0, prefix.size(), prefix) == 0;
}

} // namespace

WatchHub::WatchHub(EngineHost &host, Options options, AgentPresence *presence, bool open,
                   QObject *parent)
    : QObject(parent)
    , m_host(host)
    , m_options(options)
    , m_presence(presence)
    , m_open(open)
{
    m_heartbeat.setInterval(
        std::chrono::milliseconds(std::clamp<std::int64_t>(m_options.heartbeatMs / 4, 100, 1000)));
    connect(&m_heartbeat, &QTimer::timeout, this, &WatchHub::heartbeat);
    connect(&host, &EngineHost::eventRecorded, this, &WatchHub::recorded);
}

WatchHub::~WatchHub() = default;

void WatchHub::serve(const RestCall &call, const Respond &respond, Deferral &deferral)
{
    if (!deferral.stream)
        return respond(RestApi::problem(406, "invalid_request",
                                        "the watch answers with an event stream, which this "
                                        "transport cannot send"));
    auto text = [&](const char *name) {
        return call.query.queryItemValue(QLatin1String(name), QUrl::FullyDecoded);
    };
    auto number = [&](const QString &value, const char *name, qulonglong min, qulonglong max,
                      std::string *error) -> std::optional<qulonglong> {
        bool parsed = false;
        const qulonglong n = value.toULongLong(&parsed);
        if (!parsed || n < min || n > max) {
            *error = std::string(name) + " must be a whole number from " + std::to_string(min) +
                     " to " + std::to_string(max);
            return std::nullopt;
        }
        return n;
    };
    std::string error;
    Watcher w;
    w.prefix = text("prefix").toStdString();
    if (w.prefix.size() > 1024)
        return respond(RestApi::invalid("prefix must be at most 1024 bytes"));
    const QString events = text("events");
    if (!events.isEmpty() && events != QLatin1String("leases") && events != QLatin1String("all"))
        return respond(RestApi::invalid("events must be leases or all"));
    w.all = events == QLatin1String("all");
    w.heartbeatMs = m_options.heartbeatMs;
    if (call.query.hasQueryItem(QStringLiteral("heartbeatMs"))) {
        const auto ms = number(text("heartbeatMs"), "heartbeatMs", 100, 300'000, &error);
        if (!ms)
            return respond(RestApi::invalid(error));
        w.heartbeatMs = std::int64_t(*ms);
    }
    const QString snapshotWord = text("snapshot");
    if (!snapshotWord.isEmpty() && snapshotWord != QLatin1String("true") &&
        snapshotWord != QLatin1String("false"))
        return respond(RestApi::invalid("snapshot must be true or false"));
    // Where a reconnecting client left off: Last-Event-ID, as an EventSource sends it, else
    // ?since=.
    std::optional<std::uint64_t> since;
    const QByteArray lastId = call.header("last-event-id").trimmed();
    if (!lastId.isEmpty() || call.query.hasQueryItem(QStringLiteral("since"))) {
        const auto n = number(lastId.isEmpty() ? text("since") : QString::fromLatin1(lastId),
                              lastId.isEmpty() ? "since" : "Last-Event-ID", 0,
                              std::numeric_limits<qint64>::max(), &error);
        if (!n)
            return respond(RestApi::invalid(error));
        since = *n;
    }

    const std::uint64_t last = m_host.engine().lastSeq();
    std::vector<QByteArray> first;
    std::string reason = "new";
    bool resumed = false;
    if (since) {
        w.from = *since;
        if (*since > last) {
            reason = "future_revision"; // another history (a store started over)
        } else if (m_host.forEachRecent(*since, [&](const LedgerEvent &e) {
                       if (wants(w, e))
                           first.push_back(eventFrame(e));
                   })) {
            resumed = true;
            first.insert(first.begin(),
                         frame("resumed", {{"from", *since}, {"revision", last}}, std::nullopt));
        } else {
            reason = "compacted"; // the ring no longer holds what came after it
            first.clear();
        }
    }
    const bool snapshot = !resumed && (since || snapshotWord != QLatin1String("false"));
    std::shared_ptr<const Snapshot> state;
    if (snapshot)
        state = m_host.sharedSnapshot(std::numeric_limits<std::int64_t>::max());
    w.from = last;
    w.stream = deferral.stream;
    // A guard watching for its agent (the gate of `leasehold run`) keeps that agent live.
    if (const Via via = callerVia(call, Via::Rest); via != Via::Rest) {
        w.via = via;
        if (call.identity)
            w.agent = call.identity->did.toStdString();
        else if (m_open && didProblem(call.header("x-agent-id").toStdString()).empty())
            w.agent = call.header("x-agent-id").toStdString();
    }
    const std::uint64_t id = m_nextId++;
    countSession(w, +1);
    m_watchers.emplace(id, std::move(w));
    ++m_stats.opened;
    if (resumed)
        ++m_stats.resumed;
    else if (snapshot)
        ++m_stats.snapshots;
    if (!m_heartbeat.isActive())
        m_heartbeat.start();
    QPointer<WatchHub> hub(this);
    deferral.onClientGone = [hub, id] {
        if (hub)
            hub->erase(id);
    };
    // What it starts from goes out once durable, like every event after it.
    m_host.whenDurable([hub, id, state, reason, prefix = m_watchers.at(id).prefix, last,
                        first = std::move(first)](bool) mutable {
        if (!hub || !hub->m_watchers.count(id))
            return;
        if (!state)
            return hub->start(id, std::move(first));
        // A snapshot of many leases is encoded off the engine thread; events meanwhile wait.
        EngineHost *host = &hub->m_host;
        host->workers().start([hub, host, id, state, reason, prefix, last] {
            json leases = json::array();
            for (const LeaseInfo &lease : state->leases)
                if (startsWith(lease.resource, prefix))
                    leases.push_back(toJson(lease));
            QByteArray snapshotFrame = frame("snapshot",
                                             {{"revision", last},
                                              {"prefix", prefix},
                                              {"reason", reason},
                                              {"leases", std::move(leases)}},
                                             last);
            QMetaObject::invokeMethod(
                host,
                [hub, id, snapshotFrame = std::move(snapshotFrame)]() mutable {
                    if (hub)
                        hub->start(id, {std::move(snapshotFrame)});
                },
                Qt::QueuedConnection);
        });
    });
}

bool WatchHub::wants(const Watcher &w, const LedgerEvent &event) const
{
    return event.seq > w.from && (w.all || changesLeases(event.kind)) &&
           startsWith(event.resource, w.prefix);
}

void WatchHub::recorded(const LedgerEvent &event)
{
    if (m_watchers.empty())
        return;
    m_pending.push_back(event);
    if (!m_armed)
        armDelivery();
}

void WatchHub::armDelivery()
{
    m_armed = true;
    // After the call that recorded the event has journaled its changes: the ticket then
    // covers them, and every event the rest of this turn records.
    QMetaObject::invokeMethod(
        this,
        [this] {
            if (m_pending.empty()) {
                m_armed = false;
                return;
            }
            QPointer<WatchHub> hub(this);
            m_host.whenDurable([hub, upTo = m_pending.back().seq](bool) {
                if (hub)
                    hub->deliver(upTo);
            });
        },
        Qt::QueuedConnection);
}

void WatchHub::deliver(std::uint64_t upTo)
{
    m_armed = false;
    const auto end =
        std::upper_bound(m_pending.begin(), m_pending.end(), upTo,
                         [](std::uint64_t seq, const LedgerEvent &e) { return seq < e.seq; });
    std::vector<std::uint64_t> gone;
    for (auto e = m_pending.begin(); e != end; ++e) {
        QByteArray encoded; // once, for every watcher that wants it
        for (auto &[id, w] : m_watchers) {
            if (!wants(w, *e) || std::find(gone.begin(), gone.end(), id) != gone.end())
                continue;
            if (encoded.isEmpty())
                encoded = eventFrame(*e);
            if (!write(w, encoded))
                gone.push_back(id);
        }
    }
    m_pending.erase(m_pending.begin(), end);
    for (auto &[id, w] : m_watchers)
        w.from = std::max(w.from, upTo);
    for (std::uint64_t id : gone)
        erase(id);
    if (!m_pending.empty())
        armDelivery();
}

bool WatchHub::write(Watcher &w, const QByteArray &frame)
{
    ++m_stats.events;
    if (!w.ready) {
        w.held.push_back(frame);
        w.heldBytes += frame.size();
        if (w.heldBytes <= m_options.maxBacklogBytes)
            return true;
    } else if (w.stream->backlog() <= m_options.maxBacklogBytes) {
        // What the kernel has not taken since the last turn: the socket hands our writes to it
        // when the loop comes round, so the backlog is read before a frame is added.
        if (!w.stream->sendFrame(frame))
            return false; // the client went away
        w.quiet.start();
        return true;
    }
    ++m_stats.cutSlow;
    w.stream->sendFrame(::leasehold::frame(
        "cut", {{"reason", "slow_consumer"}, {"revision", w.from}}, std::nullopt));
    w.stream->end();
    return false;
}

void WatchHub::start(std::uint64_t id, std::vector<QByteArray> first)
{
    auto it = m_watchers.find(id);
    if (it == m_watchers.end())
        return;
    Watcher &w = it->second;
    w.ready = true;
    w.quiet.start();
    first.insert(first.end(), std::make_move_iterator(w.held.begin()),
                 std::make_move_iterator(w.held.end()));
    w.held.clear();
    w.heldBytes = 0;
    for (const QByteArray &f : first) {
        if (!write(w, f)) {
            erase(it);
            return;
        }
    }
    // Nothing was sent yet: the stream opens with the heartbeat that names where it starts.
    if (first.empty())
        w.stream->sendFrame(frame("heartbeat", {{"revision", w.from}}, w.from));
}

void WatchHub::cut(std::uint64_t id, const std::string &reason)
{
    auto it = m_watchers.find(id);
    if (it == m_watchers.end())
        return;
    it->second.stream->sendFrame(
        frame("cut", {{"reason", reason}, {"revision", it->second.from}}, std::nullopt));
    it->second.stream->end();
    erase(it);
}

void WatchHub::closeAll(const std::string &reason)
{
    while (!m_watchers.empty())
        cut(m_watchers.begin()->first, reason);
}

void WatchHub::heartbeat()
{
    if (m_watchers.empty()) {
        m_heartbeat.stop();
        return;
    }
    std::vector<std::uint64_t> gone;
    for (auto &[id, w] : m_watchers) {
        if (!w.ready || w.quiet.elapsed() < w.heartbeatMs)
            continue;
        if (w.stream->sendFrame(frame("heartbeat", {{"revision", w.from}}, w.from)))
            w.quiet.start();
        else
            gone.push_back(id);
    }
    for (std::uint64_t id : gone)
        erase(id);
}

void WatchHub::erase(std::map<std::uint64_t, Watcher>::iterator it)
{
    countSession(it->second, -1);
    m_watchers.erase(it);
}

void WatchHub::erase(std::uint64_t id)
{
    if (auto it = m_watchers.find(id); it != m_watchers.end())
        erase(it);
}

void WatchHub::countSession(const Watcher &w, int delta)
{
    if (!m_presence || w.agent.empty())
        return;
    int &n = m_sessions[{w.agent, w.via}];
    n += delta;
    m_presence->setSessions(w.agent, w.via, n);
    if (n == 0)
        m_sessions.erase({w.agent, w.via});
}

} // namespace leasehold
