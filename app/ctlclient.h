#pragma once

#include "serviceclient.h"

// The REST client behind `leasehold ctl`: one request at a time, answered synchronously (a
// command-line tool has nothing else to do meanwhile), with a timeout.
class CtlClient
{
public:
    using Reply = ServiceClient::Reply;

    CtlClient(QUrl base, QByteArray key, int timeoutMs)
        : m_service({std::move(base), std::move(key), {}, {}, timeoutMs})
    {}

    Reply get(const QString &path, const QList<QPair<QString, QString>> &query = {})
    {
        return m_service.getNow(path, query);
    }
    Reply post(const QString &path, const nlohmann::json &body)
    {
        return m_service.postNow(path, body);
    }
    QUrl base() const { return m_service.settings().base; }
    const ServiceClient::Settings &settings() const { return m_service.settings(); }

private:
    ServiceClient m_service;
};
