#include "etcdcluster.h"

#include "etcdclient.h"

#include <QDeadlineTimer>
#include <QDir>
#include <QFile>
#include <QStandardPaths>
#include <QTcpServer>
#include <QThread>

#include <csignal>
#include <memory>
#include <vector>

namespace {

// A port nothing listens on now: the kernel's choice for port 0, held in `held` until every
// member's ports are chosen, so two of them (a client and a peer port) can never be the same
// one (a client port that was also a peer port answered the health probe with HTTP 404).
quint16 freePort(std::vector<std::unique_ptr<QTcpServer>> &held)
{
    auto probe = std::make_unique<QTcpServer>();
    if (!probe->listen(QHostAddress::LocalHost, 0))
        return 0;
    const quint16 port = probe->serverPort();
    held.push_back(std::move(probe));
    return port;
}

} // namespace

EtcdCluster::EtcdCluster(int members, bool tls)
    : m_tls(tls)
{
    QStringList peers;
    std::vector<std::unique_ptr<QTcpServer>> held;
    for (int i = 0; i < members; ++i) {
        Member m;
        m.name = QStringLiteral("m%1").arg(i);
        m.clientPort = freePort(held);
        m.peerPort = freePort(held);
        peers << QStringLiteral("%1=http://127.0.0.1:%2").arg(m.name).arg(m.peerPort);
        m_members.push_back(std::move(m));
    }
    m_initialCluster = peers.join(QLatin1Char(','));
}

EtcdCluster::~EtcdCluster()
{
    for (int i = 0; i < size(); ++i)
        kill(i);
}

QString EtcdCluster::binary()
{
    const QString set = qEnvironmentVariable("LEASEHOLD_ETCD");
    return set.isEmpty() ? QStandardPaths::findExecutable(QStringLiteral("etcd")) : set;
}

std::vector<QUrl> EtcdCluster::endpoints() const
{
    std::vector<QUrl> out;
    for (int i = 0; i < size(); ++i)
        out.push_back(endpoint(i));
    return out;
}

QUrl EtcdCluster::endpoint(int member) const
{
    return QUrl(QStringLiteral("%1://127.0.0.1:%2")
                    .arg(m_tls ? QLatin1String("https") : QLatin1String("http"))
                    .arg(m_members[std::size_t(member)].clientPort));
}

leasehold::etcd::Client::Tls EtcdCluster::clientTls() const
{
    if (!m_tls)
        return {};
    return {m_dir.filePath(QStringLiteral("ca.crt")), m_dir.filePath(QStringLiteral("client.crt")),
            m_dir.filePath(QStringLiteral("client.key"))};
}

bool EtcdCluster::makeCertificates(std::string *error)
{
    // EC keys (quick to make); the server's certificate names 127.0.0.1 and carries no key
    // usage limits, since etcd's gateway also presents it as a client to etcd itself.
    const QString dir = m_dir.path();
    const QList<QStringList> steps = {
        {"req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
         "-keyout", dir + "/ca.key", "-out", dir + "/ca.crt", "-days", "2", "-subj",
         "/CN=leasehold test CA"},
        {"req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout",
         dir + "/server.key", "-out", dir + "/server.csr", "-subj", "/CN=127.0.0.1"},
        {"x509", "-req", "-in", dir + "/server.csr", "-CA", dir + "/ca.crt", "-CAkey",
         dir + "/ca.key", "-CAcreateserial", "-out", dir + "/server.crt", "-days", "2", "-extfile",
         dir + "/san.cnf"},
        {"req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout",
         dir + "/client.key", "-out", dir + "/client.csr", "-subj", "/CN=leasehold"},
        {"x509", "-req", "-in", dir + "/client.csr", "-CA", dir + "/ca.crt", "-CAkey",
         dir + "/ca.key", "-CAcreateserial", "-out", dir + "/client.crt", "-days", "2"},
    };
    QFile san(dir + QStringLiteral("/san.cnf"));
    if (!san.open(QIODevice::WriteOnly) || san.write("subjectAltName=IP:127.0.0.1\n") < 0) {
        *error = "cannot write " + san.fileName().toStdString();
        return false;
    }
    san.close();
    for (const QStringList &args : steps) {
        QProcess openssl;
        openssl.setProcessChannelMode(QProcess::MergedChannels);
        openssl.start(QStringLiteral("openssl"), args);
        if (!openssl.waitForFinished(30'000) || openssl.exitCode() != 0) {
            *error = "openssl " + args.join(' ').toStdString() +
                     " failed: " + openssl.readAll().toStdString() +
                     openssl.errorString().toStdString();
            return false;
        }
    }
    return true;
}

std::vector<QUrl> EtcdCluster::endpointsFrom(int member) const
{
    std::vector<QUrl> out;
    for (int i = 0; i < size(); ++i)
        out.push_back(endpoint((member + i) % size()));
    return out;
}

int EtcdCluster::leader() const
{
    leasehold::etcd::Client client({endpoints(), 1000, clientTls()});
    const QDeadlineTimer deadline(10'000);
    while (!deadline.hasExpired()) {
        for (int i = 0; i < size(); ++i) {
            const Member &m = m_members[std::size_t(i)];
            if (!m.process || m.process->state() != QProcess::Running)
                continue;
            const auto status = client.status(std::size_t(i));
            if (status && status->leaderId != 0 && status->leaderId == status->memberId)
                return i;
        }
        QThread::msleep(50); // an election among outside processes: polled, with a deadline
    }
    return -1;
}

bool EtcdCluster::start(std::string *error)
{
    if (binary().isEmpty()) {
        *error = "no etcd binary (install etcd-server, or set LEASEHOLD_ETCD)";
        return false;
    }
    if (m_tls && !QFile::exists(m_dir.filePath(QStringLiteral("client.crt"))) &&
        !makeCertificates(error))
        return false;
    for (int i = 0; i < size(); ++i) {
        if (!launch(i, true, error))
            return false;
    }
    for (int i = 0; i < size(); ++i) {
        if (!waitUntilAnswering(i, error))
            return false;
    }
    return true;
}

bool EtcdCluster::launch(int member, bool fresh, std::string *error)
{
    Member &m = m_members[std::size_t(member)];
    const QString client = endpoint(member).toString();
    const QString peer = QStringLiteral("http://127.0.0.1:%1").arg(m.peerPort);
    m.process = std::make_unique<QProcess>();
    m.process->setProcessChannelMode(QProcess::MergedChannels);
    m.process->setStandardOutputFile(m_dir.filePath(m.name + QStringLiteral(".log")),
                                     QIODevice::Append);
    QStringList args = {QStringLiteral("--name"),
                        m.name,
                        QStringLiteral("--data-dir"),
                        m_dir.filePath(m.name),
                        QStringLiteral("--listen-client-urls"),
                        client,
                        QStringLiteral("--advertise-client-urls"),
                        client,
                        QStringLiteral("--listen-peer-urls"),
                        peer,
                        QStringLiteral("--initial-advertise-peer-urls"),
                        peer,
                        QStringLiteral("--initial-cluster"),
                        m_initialCluster,
                        QStringLiteral("--initial-cluster-state"),
                        fresh ? QStringLiteral("new") : QStringLiteral("existing"),
                        QStringLiteral("--initial-cluster-token"),
                        QDir(m_dir.path()).dirName(),
                        QStringLiteral("--heartbeat-interval"),
                        QStringLiteral("50"),
                        QStringLiteral("--election-timeout"),
                        QStringLiteral("500"),
                        QStringLiteral("--logger"),
                        QStringLiteral("zap"),
                        QStringLiteral("--log-outputs"),
                        QStringLiteral("stderr"),
                        QStringLiteral("--log-level"),
                        QStringLiteral("warn")};
    if (m_tls)
        args << QStringLiteral("--cert-file") << m_dir.filePath(QStringLiteral("server.crt"))
             << QStringLiteral("--key-file") << m_dir.filePath(QStringLiteral("server.key"))
             << QStringLiteral("--trusted-ca-file") << m_dir.filePath(QStringLiteral("ca.crt"))
             << QStringLiteral("--client-cert-auth");
    m.process->start(binary(), args);
    if (!m.process->waitForStarted(10'000)) {
        *error = "cannot start " + binary().toStdString() + ": " +
                 m.process->errorString().toStdString();
        return false;
    }
    return true;
}

bool EtcdCluster::waitUntilAnswering(int member, std::string *error)
{
    leasehold::etcd::Client client({{endpoint(member)}, 1000, clientTls()});
    const QDeadlineTimer deadline(30'000);
    while (!deadline.hasExpired()) {
        if (client.range("health-probe"))
            return true;
        if (m_members[std::size_t(member)].process->state() == QProcess::NotRunning)
            break;
        QThread::msleep(50); // an outside process coming up: polled, with a deadline
    }
    *error = "etcd member " + std::to_string(member) +
             " did not come up: " + client.lastError().message + "\n" + logs();
    return false;
}

std::string EtcdCluster::logs() const
{
    std::string out;
    for (const Member &m : m_members) {
        QFile log(m_dir.filePath(m.name + QStringLiteral(".log")));
        if (log.open(QIODevice::ReadOnly))
            out += "--- " + m.name.toStdString() + "\n" + log.readAll().right(4000).toStdString();
    }
    return out;
}

void EtcdCluster::kill(int member)
{
    Member &m = m_members[std::size_t(member)];
    if (!m.process || m.process->state() == QProcess::NotRunning)
        return;
    ::kill(pid_t(m.process->processId()), SIGCONT); // a frozen member must be able to die
    m.process->kill();
    m.process->waitForFinished(10'000);
}

void EtcdCluster::freeze(int member)
{
    ::kill(pid_t(m_members[std::size_t(member)].process->processId()), SIGSTOP);
}

void EtcdCluster::thaw(int member)
{
    ::kill(pid_t(m_members[std::size_t(member)].process->processId()), SIGCONT);
}

bool EtcdCluster::restart(int member, std::string *error)
{
    kill(member);
    return launch(member, false, error) && waitUntilAnswering(member, error);
}
