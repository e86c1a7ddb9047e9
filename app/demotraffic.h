#pragma once

#include <QHash>
#include <QObject>
#include <QUrl>

#include <functional>
#include <random>

class QNetworkAccessManager;
class QJsonObject;

// --demo: simulated agents that drive real traffic over loopback HTTP, so every view of the
// console has something to show within seconds. Four scenes loop, staggered, over steady
// background work:
//  - two release agents take turns on lock:deploy/production (a refusal naming the holder, then
//    a parked wait that a release ends);
//  - a builder takes a lease and "crashes": it never releases, the lease expires, trust falls;
//  - two refactoring agents each hold a file and want the other's: one is refused as a deadlock;
//  - a herd of fifty agents goes for one file at once and backs off as the refusals tell it;
//  - workers take, pin and release workspace paths all the time.
//
// Thread: its own (any thread with an event loop); it only speaks HTTP.
class DemoTraffic : public QObject
{
    Q_OBJECT

public:
    struct Options
    {
        QUrl base;                       // http://127.0.0.1:PORT
        QHash<QString, QByteArray> keys; // did -> bearer key; empty: --open (X-Agent-Id)
        int workers = 6;
        quint32 seed = 1;
    };

    explicit DemoTraffic(Options options, QObject *parent = nullptr);
    ~DemoTraffic() override;

    // Every agent the scenes use, so their keys can be minted first.
    static QStringList agents(int workers = 6);
    // Starts the scenes; call on the thread the object lives on.
    void start();
    quint64 requests() const { return m_requests; }

private:
    using Reply = std::function<void(int status, const QJsonObject &body)>;
    void post(const QString &did, const QString &route, const QJsonObject &body, Reply reply = {});
    void after(int ms, std::function<void()> step);

    void deployScene();
    void crashScene();
    void deadlockScene();
    void herdScene();
    void herdMember(const QString &did, int attempt);
    void worker(const QString &did);

    Options m_options;
    QNetworkAccessManager *m_net = nullptr;
    std::mt19937 m_random;
    quint64 m_requests = 0;
};
