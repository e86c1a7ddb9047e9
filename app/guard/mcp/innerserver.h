#pragma once

#include <QObject>
#include <QProcess>
#include <QStringList>

#include <nlohmann/json.hpp>

// The MCP server the guard stands in front of: messages go to it with send(), and come back as
// `message` signals; `died` says once why it is gone.
class InnerTransport : public QObject
{
    Q_OBJECT

public:
    using QObject::QObject;
    virtual void start() = 0;
    virtual void send(const nlohmann::json &message) = 0;

signals:
    void message(const nlohmann::json &message);
    void died(const QString &why);
};

// An inner server as a child process speaking MCP over stdio: the client's messages go to its
// stdin, its lines come back as messages; its stderr is passed through to the guard's.
class InnerServer : public InnerTransport
{
    Q_OBJECT

public:
    InnerServer(QString program, QStringList arguments, QObject *parent = nullptr);
    ~InnerServer() override;

    void start() override;
    void send(const nlohmann::json &message) override;

private:
    void readLines();
    void fail(const QString &why);

    QString m_program;
    QStringList m_arguments;
    QProcess m_process;
    QByteArray m_partial;
    bool m_alive = false;
};
