#pragma once

#include <QByteArray>
#include <QNetworkAccessManager>
#include <QString>
#include <QUrl>

#include <nlohmann/json.hpp>

#include <functional>

// The REST client of Leasehold's own tools (`ctl`, the guards, the hooks): a base URL, a bearer
// key or, for an instance run with --open, the agent's DID; every request says which tool sent
// it (X-Leasehold-Via) so the instance can show how each agent is connected. Requests are
// answered asynchronously (`post`, `get`) or, for a command-line tool with nothing else to do,
// synchronously (`postNow`, `getNow`); each has a transfer timeout.
//
// Thread: the thread that made it.
class ServiceClient
{
public:
    // The coordination API's routes are below this path.
    static constexpr const char *kBase = "/api/v1/acp/coordination";

    struct Reply
    {
        int status = 0;       // HTTP status; 0 when the instance could not be reached
        QString networkError; // why it could not be reached
        nlohmann::json body;  // parsed JSON (discarded when the body is not JSON)

        bool reached() const { return status != 0; }
        // The instance's own words for a refusal or a problem: `message`, else `error`.
        QString explanation() const;
    };
    using Done = std::function<void(Reply)>;

    struct Settings
    {
        QUrl base;
        QByteArray key; // empty: none (an --open instance)
        QString agent;  // the DID to act as when there is no key
        QByteArray via; // "guard", "hook", "git"; empty for ctl
        int timeoutMs = 10'000;
    };

    explicit ServiceClient(Settings settings);

    void post(const QString &path, nlohmann::json body, Done done);
    void get(const QString &path, const QList<QPair<QString, QString>> &query, Done done);
    Reply postNow(const QString &path, nlohmann::json body);
    Reply getNow(const QString &path, const QList<QPair<QString, QString>> &query = {});

    const Settings &settings() const { return m_settings; }
    // A request to `path` below the base, with the key (or agent) and via headers.
    static QNetworkRequest request(const Settings &settings, const QString &path,
                                   const QList<QPair<QString, QString>> &query = {});
    QNetworkRequest request(const QString &path,
                            const QList<QPair<QString, QString>> &query = {}) const
    {
        return request(m_settings, path, query);
    }

    // A finished reply as a Reply: status, why it failed, its JSON body.
    static Reply read(class QNetworkReply *reply);

private:
    QByteArray payload(nlohmann::json body) const;
    static void deliver(class QNetworkReply *reply, Done done);
    Reply wait(class QNetworkReply *reply);

    Settings m_settings;
    QNetworkAccessManager m_net;
};
