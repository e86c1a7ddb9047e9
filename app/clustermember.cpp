#include "clustermember.h"

#include "election.h"

#include <QLoggingCategory>
#include <QTimer>

Q_LOGGING_CATEGORY(lcCluster, "leasehold.cluster")

using leasehold::etcd::Client;
using leasehold::etcd::Election;

class ClusterMember::Worker : public QObject
{
    Q_OBJECT

public:
    explicit Worker(const ClusterMember::Options &options)
        : m_client(Client::Options{options.etcd.endpoints,
                                   std::max(500, options.sessionTtlSeconds * 1000 / 4),
                                   options.etcd.tls})
        , m_election(m_client, electionOptions(options))
        , m_stepEveryMs(options.stepEveryMs)
    {}

    void start()
    {
        m_timer = new QTimer(this);
        m_timer->setInterval(m_stepEveryMs);
        connect(m_timer, &QTimer::timeout, this, &Worker::step);
        m_timer->start();
        step();
    }
    void stop()
    {
        if (m_timer)
            m_timer->stop();
        m_election.resign();
    }

signals:
    void changed(ClusterMember::Role role, const QString &leader, const QString &fenceKey,
                 qint64 term, const QStringList &members);
    void problemChanged(const QString &problem);

private:
    static Election::Options electionOptions(const ClusterMember::Options &o)
    {
        Election::Options e;
        e.prefix = o.prefix;
        e.address = o.advertise;
        e.ttlSeconds = o.sessionTtlSeconds;
        e.stepDownMarginMs = std::max<std::int64_t>(500, o.sessionTtlSeconds * 1000 / 3);
        return e;
    }
    void step()
    {
        const Election::Role role = m_election.step();
        const auto mine = ClusterMember::Role(int(role));
        const QString leader = QString::fromStdString(m_election.leaderAddress());
        if (m_election.problem() != m_lastProblem) {
            if (!m_election.problem().empty())
                qCWarning(lcCluster) << m_election.problem().c_str();
            m_lastProblem = m_election.problem();
            emit problemChanged(QString::fromStdString(m_lastProblem));
        }
        QStringList members;
        for (const std::string &address : m_election.candidates())
            members << QString::fromStdString(address);
        if (m_reported && mine == m_role && leader == m_leader && m_election.term() == m_term &&
            members == m_members)
            return;
        m_reported = true;
        m_role = mine;
        m_leader = leader;
        m_term = m_election.term();
        m_members = members;
        emit changed(mine, leader, QString::fromStdString(m_election.fence().key), m_term, members);
    }

    Client m_client;
    Election m_election;
    int m_stepEveryMs;
    QTimer *m_timer = nullptr;
    bool m_reported = false;
    ClusterMember::Role m_role = ClusterMember::Role::Candidate;
    QString m_leader;
    qint64 m_term = 0;
    QStringList m_members;
    std::string m_lastProblem;
};

ClusterMember::ClusterMember(Options options, QObject *parent)
    : QObject(parent)
    , m_options(std::move(options))
{
    qRegisterMetaType<ClusterMember::Role>();
}

ClusterMember::~ClusterMember()
{
    if (m_worker) {
        QMetaObject::invokeMethod(m_worker, &Worker::stop, Qt::BlockingQueuedConnection);
        m_thread.quit();
        m_thread.wait();
        delete m_worker;
    }
}

void ClusterMember::start()
{
    m_worker = new Worker(m_options);
    m_worker->moveToThread(&m_thread);
    connect(m_worker, &Worker::changed, this, &ClusterMember::changed, Qt::QueuedConnection);
    connect(m_worker, &Worker::problemChanged, this, &ClusterMember::problemChanged,
            Qt::QueuedConnection);
    m_thread.setObjectName(QStringLiteral("leasehold-cluster"));
    m_thread.start();
    QMetaObject::invokeMethod(m_worker, &Worker::start, Qt::QueuedConnection);
}

#include "clustermember.moc"
