// EtcdStore: its health as its parts report it (the writer's last attempt, the election's lapse)
// and as the engine thread hears it, once per change; and the key layout every part writes.

#include "etcdstore.h"

#include <QLoggingCategory>

Q_LOGGING_CATEGORY(lcEtcdStore, "leasehold.etcd")

namespace leasehold::etcd {

std::string EtcdStore::key(const char *kind, const std::string &name) const
{
    return m_options.prefix + kind + name;
}

void EtcdStore::setHealthCallback(std::function<void(const StoreHealth &)> callback)
{
    m_onHealth = std::move(callback);
}

StoreHealth EtcdStore::health() const
{
    std::lock_guard lock(m_mutex);
    return m_health;
}

void EtcdStore::setLapsed(bool lapsed)
{
    std::unique_lock lock(m_mutex);
    m_lapsed = lapsed;
    publishHealth(lock);
}

void EtcdStore::reportHealth(const StoreHealth &health)
{
    std::unique_lock lock(m_mutex);
    m_writerHealth = health;
    publishHealth(lock);
}

void EtcdStore::publishHealth(std::unique_lock<std::mutex> &lock)
{
    const StoreHealth health =
        m_lapsed && m_writerHealth.ok()
            ? StoreHealth{StoreHealth::Problem::EtcdUnavailable,
                          "this leader cannot renew its etcd session in time"}
            : m_writerHealth;
    if (m_health == health)
        return;
    m_health = health;
    lock.unlock();
    if (health.ok())
        qCInfo(lcEtcdStore) << "etcd takes writes again";
    else
        qCCritical(lcEtcdStore) << "cannot write to etcd:" << health.phrase() << "-"
                                << health.detail.c_str();
    // Two threads publish (the writer and the election through setLapsed), so their queued
    // calls can arrive in the other order than their changes: deliver what holds now, once.
    QMetaObject::invokeMethod(
        this,
        [this] {
            const StoreHealth now = this->health();
            if (now == m_delivered)
                return;
            m_delivered = now;
            if (m_onHealth)
                m_onHealth(now);
        },
        Qt::QueuedConnection);
}

} // namespace leasehold::etcd
