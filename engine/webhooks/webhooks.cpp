#include "webhooks.h"

namespace leasehold {

Webhooks::Webhooks(WebhookOptions options)
    : m_dispatcher(new WebhookDispatcher(std::move(options), &m_endpoints))
{
    m_thread.setObjectName(QStringLiteral("webhooks"));
    m_dispatcher->moveToThread(&m_thread);
    m_anchor.moveToThread(&m_thread);
    m_dispatcher->setTroubleSink([this](std::vector<WebhookTrouble> troubles) {
        std::lock_guard lock(m_troubleMutex);
        m_troubles = std::move(troubles);
    });
}

std::vector<WebhookTrouble> Webhooks::troubles() const
{
    std::lock_guard lock(m_troubleMutex);
    return m_troubles;
}

Webhooks::~Webhooks()
{
    if (m_thread.isRunning()) {
        // What was published is queued in the outbox before the thread goes; replies still
        // outstanding are dropped (their deliveries are sent again at the next start).
        // Through the anchor, not the dispatcher: an object is not deleted inside its own call.
        QMetaObject::invokeMethod(
            &m_anchor,
            [this] {
                drain();
                delete m_dispatcher;
            },
            Qt::BlockingQueuedConnection);
        m_thread.quit();
        m_thread.wait();
    } else {
        delete m_dispatcher;
    }
}

bool Webhooks::start(QString *error)
{
    m_thread.start();
    bool ok = false;
    QMetaObject::invokeMethod(
        m_dispatcher, [&] { ok = m_dispatcher->open(error); }, Qt::BlockingQueuedConnection);
    return ok;
}

void Webhooks::publish(WebhookEvent event)
{
    std::lock_guard lock(m_mutex);
    m_pending.push_back(std::move(event));
    if (m_drainPosted)
        return;
    m_drainPosted = true;
    QMetaObject::invokeMethod(
        m_dispatcher, [this] { drain(); }, Qt::QueuedConnection);
}

void Webhooks::drain()
{
    std::vector<WebhookEvent> batch;
    {
        std::lock_guard lock(m_mutex);
        batch.swap(m_pending);
        m_drainPosted = false;
    }
    if (!batch.empty())
        m_dispatcher->publish(batch);
}

} // namespace leasehold
