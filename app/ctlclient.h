#pragma once

#include <QByteArray>
#include <QNetworkAccessManager>
#include <QString>
#include <QUrl>

#include <nlohmann/json.hpp>

// The REST client behind `leasehold ctl`: one request at a time, answered synchronously (a
// command-line tool has nothing else to do meanwhile), with a timeout.
class CtlClient
{
public:
    struct Reply
    {
        int status = 0;       // HTTP status; 0 when the instance could not be reached
        QString networkError; // why it could not be reached
        nlohmann::json body;  // parsed JSON (discarded when the body is not JSON)
    };

    CtlClient(QUrl base, QByteArray key, int timeoutMs);

    Reply get(const QString &path, const QList<QPair<QString, QString>> &query = {});
    Reply post(const QString &path, const nlohmann::json &body);

    QUrl base() const { return m_base; }

private:
    Reply finish(class QNetworkReply *reply);
    QNetworkRequest request(const QString &path, const QList<QPair<QString, QString>> &query);

    QUrl m_base;
    QByteArray m_key;
    int m_timeoutMs;
    QNetworkAccessManager m_net;
};
