#include "implicitleases.h"

#include <QEventLoop>
#include <QTimer>

#include <chrono>

using leasehold::fsgate::Refusal;
using nlohmann::json;

namespace {

const QString kBase = QLatin1String(ServiceClient::kBase);

} // namespace

ImplicitLeases::ImplicitLeases(ServiceClient::Settings settings, std::int64_t ttlMs,
                               QObject *parent)
    : QObject(parent)
    , m_client(std::move(settings))
    , m_ttlMs(ttlMs)
{
    m_sweep.setInterval(std::chrono::milliseconds(std::max<std::int64_t>(ttlMs / 4, 250)));
    connect(&m_sweep, &QTimer::timeout, this, &ImplicitLeases::sweep);
    m_sweep.start();
}

std::int64_t ImplicitLeases::now()
{
    using namespace std::chrono;
    return duration_cast<milliseconds>(steady_clock::now().time_since_epoch()).count();
}

void ImplicitLeases::changed(const std::string &name, std::uint64_t handle, bool covered)
{
    enqueue({Work::Changed, name, handle, covered, {}});
}

void ImplicitLeases::removed(const std::string &name)
{
    enqueue({Work::Removed, name, 0, false, {}});
}

void ImplicitLeases::closed(std::uint64_t handle)
{
    enqueue({Work::Closed, {}, handle, false, {}});
}

void ImplicitLeases::refused(const Refusal &refusal)
{
    enqueue({Work::Refused, {}, 0, false, refusal});
}

void ImplicitLeases::enqueue(Work work)
{
    bool first = false;
    {
        std::lock_guard lock(m_queueLock);
        first = m_queue.empty();
        m_queue.push_back(std::move(work));
    }
    if (first) // one wake-up for however many the workers queue meanwhile
        QMetaObject::invokeMethod(this, &ImplicitLeases::drain, Qt::QueuedConnection);
}

void ImplicitLeases::drain()
{
    std::vector<Work> batch;
    {
        std::lock_guard lock(m_queueLock);
        batch.swap(m_queue);
    }
    for (Work &w : batch) {
        switch (w.kind) {
        case Work::Changed: {
            auto it = m_claims.find(w.name);
            if (it == m_claims.end()) {
                if (w.covered)
                    break; // a lease of its own already covers it
                it = m_claims.emplace(w.name, Claim{}).first;
                take(w.name);
            }
            Claim &c = it->second;
            c.touched = now();
            if (w.handle != 0 && c.handles.insert(w.handle).second)
                m_handles[w.handle] = w.name;
            if (!c.requesting && !c.leaseId.empty() && c.touched - c.renewed > m_ttlMs / 3)
                take(w.name); // asking again extends it
            break;
        }
        case Work::Removed: {
            auto it = m_claims.find(w.name);
            if (it == m_claims.end())
                break;
            for (std::uint64_t h : it->second.handles)
                m_handles.erase(h);
            if (it->second.requesting) {
                it->second.dropAfter = true;
                it->second.handles.clear();
            } else {
                give(w.name, it->second.leaseId);
            }
            break;
        }
        case Work::Closed: {
            auto h = m_handles.find(w.handle);
            if (h == m_handles.end())
                break;
            if (auto it = m_claims.find(h->second); it != m_claims.end())
                it->second.handles.erase(w.handle);
            m_handles.erase(h);
            break;
        }
        case Work::Refused: {
            // The instance checks it again by its own rules and records it (via fs).
            const Refusal &r = w.refusal;
            ++m_inFlight;
            m_client.post(kBase + QStringLiteral("/check"),
                          {{"resource", r.resource},
                           {"op", r.op},
                           {"pid", r.pid},
                           {"command", r.command.substr(0, 64)}},
                          [this](ServiceClient::Reply) { settled(); });
            break;
        }
        }
    }
    if (m_inFlight == 0)
        emit idle();
}

void ImplicitLeases::take(const std::string &name)
{
    Claim &c = m_claims.at(name);
    c.requesting = true;
    ++m_inFlight;
    m_client.post(kBase + QStringLiteral("/lease"),
                  {{"resource", name}, {"mode", "write"}, {"ttlMs", m_ttlMs}},
                  [this, name](ServiceClient::Reply reply) {
                      auto it = m_claims.find(name);
                      if (it != m_claims.end()) {
                          Claim &claim = it->second;
                          claim.requesting = false;
                          if (reply.status == 200 && reply.body.contains("lease")) {
                              claim.leaseId = reply.body["lease"].value("leaseId", "");
                              claim.renewed = now();
                              if (claim.dropAfter)
                                  give(name, claim.leaseId);
                          } else if (claim.leaseId.empty()) {
                              // Another agent took it first, or the instance cannot be
                              // reached: no claim; the next change asks again.
                              for (std::uint64_t h : claim.handles)
                                  m_handles.erase(h);
                              m_claims.erase(it);
                          }
                      }
                      settled();
                  });
}

void ImplicitLeases::give(std::string name, std::string leaseId)
{
    m_claims.erase(name);
    if (leaseId.empty())
        return;
    ++m_inFlight;
    m_client.post(kBase + QStringLiteral("/release"), {{"resource", name}, {"leaseId", leaseId}},
                  [this](ServiceClient::Reply) { settled(); });
}

void ImplicitLeases::sweep()
{
    const std::int64_t t = now();
    std::vector<std::pair<std::string, std::string>> quiet;
    for (auto &[name, c] : m_claims) {
        if (c.requesting || c.leaseId.empty())
            continue;
        if (!c.handles.empty()) {
            if (t - c.renewed > m_ttlMs / 3)
                take(name); // an open handle keeps it
        } else if (t - c.touched > m_ttlMs * 3 / 4) {
            quiet.emplace_back(name, c.leaseId); // given back before it would expire
        }
    }
    for (const auto &[name, leaseId] : quiet)
        give(name, leaseId);
}

void ImplicitLeases::settled()
{
    if (--m_inFlight == 0) {
        std::lock_guard lock(m_queueLock);
        if (m_queue.empty())
            emit idle();
    }
}

std::vector<std::string> ImplicitLeases::claimed() const
{
    std::vector<std::string> out;
    for (const auto &[name, c] : m_claims)
        out.push_back(name);
    return out;
}

bool ImplicitLeases::releaseAll(int timeoutMs)
{
    drain();
    m_sweep.stop();
    QEventLoop loop;
    // What is on its way lands first (a grant answered after the release would outlive it).
    if (m_inFlight > 0) {
        connect(this, &ImplicitLeases::idle, &loop, &QEventLoop::quit);
        QTimer::singleShot(timeoutMs / 2, &loop, &QEventLoop::quit);
        loop.exec();
        disconnect(this, &ImplicitLeases::idle, &loop, nullptr);
    }
    m_claims.clear();
    m_handles.clear();
    bool released = false;
    ServiceClient::Settings settings = m_client.settings();
    settings.timeoutMs = timeoutMs;
    auto *client = new ServiceClient(settings);
    client->post(kBase + QStringLiteral("/release"), json::object(),
                 [&](ServiceClient::Reply reply) {
                     released = reply.status == 200;
                     loop.quit();
                 });
    QTimer::singleShot(timeoutMs + 500, &loop, &QEventLoop::quit);
    loop.exec();
    delete client;
    return released;
}
