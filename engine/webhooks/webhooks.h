#pragma once

#include "webhookdispatcher.h"

#include <QObject>
#include <QPointer>
#include <QThread>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

namespace leasehold {

// The webhooks of one service: the delivery thread and its dispatcher, and the one cheap way in
// from the engine thread (publish). Everything else (add, remove, list, test) runs on the
// delivery thread and answers on the caller's thread, so no route and no lever ever waits on
// the outbox's disk or a receiver.
//
// Thread: created and destroyed on the engine thread; publish() and hasEndpoints() from any.
class Webhooks
{
public:
    explicit Webhooks(WebhookOptions options);
    ~Webhooks();
    Webhooks(const Webhooks &) = delete;
    Webhooks &operator=(const Webhooks &) = delete;

    // Starts the delivery thread and opens the outbox there (waiting for that, once).
    bool start(QString *error);

    // Hands `event` to the delivery thread: a lock, a push, and at most one queued call per
    // batch. Never blocks on the disk or the network.
    void publish(WebhookEvent event);
    // Whether any endpoint is configured (the engine thread skips building events otherwise).
    bool hasEndpoints() const { return m_endpoints.load(std::memory_order_relaxed) > 0; }
    // The endpoints whose deliveries fail, as the delivery thread last saw them (any thread).
    std::vector<WebhookTrouble> troubles() const;

    // Runs `work` on the delivery thread, then `done` with its result on `context`'s thread
    // (dropped if `context` is gone by then).
    template<class R>
    void ask(std::function<R(WebhookDispatcher &)> work, QObject *context,
             std::function<void(R)> done)
    {
        QPointer<QObject> guard(context);
        QMetaObject::invokeMethod(
            m_dispatcher, [this, work = std::move(work), guard, done = std::move(done)]() mutable {
                drain();
                R result = work(*m_dispatcher);
                if (!guard)
                    return;
                QMetaObject::invokeMethod(
                    guard.data(),
                    [done = std::move(done), result = std::move(result)]() mutable {
                        done(std::move(result));
                    },
                    Qt::QueuedConnection);
            });
    }

private:
    // On the delivery thread: hands what publish() gathered to the dispatcher.
    void drain();

    QThread m_thread;
    QObject m_anchor; // lives on m_thread: where the dispatcher is deleted from at the end
    WebhookDispatcher *m_dispatcher = nullptr; // lives on m_thread
    std::atomic<int> m_endpoints{0};
    std::mutex m_mutex;
    std::vector<WebhookEvent> m_pending; // under m_mutex
    bool m_drainPosted = false;          // under m_mutex
    mutable std::mutex m_troubleMutex;
    std::vector<WebhookTrouble> m_troubles; // under m_troubleMutex
};

} // namespace leasehold
