#pragma once

#include <QObject>
#include <QProcess>
#include <QStringList>

#include <nlohmann/json.hpp>

// The MCP server the guard stands in front of, as a child process speaking MCP over stdio: the
// client's messages go to its stdin, its lines come back as messages; its stderr is passed
// through to the guard's. When it exits, `died` says why (once).
class InnerServer : public QObject
{
    Q_OBJECT

public:
    InnerServer(QString program, QStringList arguments, QObject *parent = nullptr);
    ~InnerServer() override;

    void start();
    void send(const nlohmann::json &message);
    bool alive() const { return m_alive; }
    const QString &why() const { return m_why; }

signals:
    void message(const nlohmann::json &message);
    void died(const QString &why);

private:
    void readLines();
    void fail(const QString &why);

    QString m_program;
    QStringList m_arguments;
    QProcess m_process;
    QByteArray m_partial;
    bool m_alive = false;
    QString m_why;
};
