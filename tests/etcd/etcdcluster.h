#pragma once

#include "etcdclient.h"

#include <QProcess>
#include <QTemporaryDir>
#include <QUrl>

#include <memory>
#include <string>
#include <vector>

// A throwaway etcd cluster on loopback for tests: `members` etcd processes on free ports, their
// data in a temporary directory, fast elections (heartbeat 50 ms, election timeout 500 ms).
// Members can be killed, frozen and brought back. Everything is killed when it goes.
// With `tls`, clients speak TLS to the members (https://, certificates made with openssl for
// 127.0.0.1 by a throwaway CA) and must show a client certificate (--client-cert-auth).
class EtcdCluster
{
public:
    explicit EtcdCluster(int members, bool tls = false);
    ~EtcdCluster();

    // The etcd binary (LEASEHOLD_ETCD, else etcd on PATH), or empty.
    static QString binary();

    // Starts every member and returns once each answers, within 30 s; else *error says why
    // (with the members' logs).
    bool start(std::string *error);
    std::vector<QUrl> endpoints() const;
    // What a client needs to be let in (empty without TLS).
    leasehold::etcd::Client::Tls clientTls() const;
    QUrl endpoint(int member) const;
    int size() const { return int(m_members.size()); }
    // The endpoints with `member`'s first: a client built on them talks to it first.
    std::vector<QUrl> endpointsFrom(int member) const;
    // The member that leads now, as the running members agree, within 10 s; else -1.
    int leader() const;

    void kill(int member);   // SIGKILL
    void freeze(int member); // SIGSTOP
    void thaw(int member);   // SIGCONT
    // Starts a killed member again on its data; returns once it answers (within 30 s).
    bool restart(int member, std::string *error);

private:
    struct Member
    {
        QString name;
        quint16 clientPort = 0;
        quint16 peerPort = 0;
        std::unique_ptr<QProcess> process;
    };
    bool launch(int member, bool fresh, std::string *error);
    bool makeCertificates(std::string *error);
    bool waitUntilAnswering(int member, std::string *error);
    std::string logs() const;

    QTemporaryDir m_dir;
    std::vector<Member> m_members;
    QString m_initialCluster;
    bool m_tls = false;
};
