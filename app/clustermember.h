#pragma once

#include "etcdclient.h"

#include <QObject>
#include <QString>
#include <QThread>
#include <QUrl>

#include <memory>
#include <vector>

// This instance's candidacy in cluster mode: an etcd::Election stepped on a thread of its own
// (every etcd call blocks, within its bound), so that neither the engine nor the HTTP front
// ever waits on etcd for it. What it learns comes back as changed(), queued to the thread
// that made the member.
class ClusterMember : public QObject
{
    Q_OBJECT

public:
    struct Options
    {
        leasehold::etcd::Client::Options etcd; // its timeout is set from the session's
        std::string prefix = "leasehold/";
        std::string advertise;
        int sessionTtlSeconds = 3;
        int stepEveryMs = 250;
    };
    // Lapsed: it led, and cannot confirm in time that it still does (Election::Role::Lapsed).
    enum class Role { Candidate, Follower, Leader, Lapsed };
    Q_ENUM(Role)

    explicit ClusterMember(Options options, QObject *parent = nullptr);
    // Resigns (a standby takes over at once rather than after the session runs out) and stops.
    ~ClusterMember() override;

    void start();

signals:
    // The role, who leads (an advertised URL; empty when none is known), while leading the
    // fence its writes carry (its election key and term), and every instance standing, the
    // leader first.
    void changed(ClusterMember::Role role, const QString &leader, const QString &fenceKey,
                 qint64 term, const QStringList &members);
    // Why the last look at etcd failed (empty once one succeeds), as etcd::Election says it.
    void problemChanged(const QString &problem);

private:
    class Worker;
    Options m_options;
    QThread m_thread;
    Worker *m_worker = nullptr; // lives on m_thread
};
