#include "innerserver.h"

InnerServer::InnerServer(QString program, QStringList arguments, QObject *parent)
    : InnerTransport(parent)
    , m_program(std::move(program))
    , m_arguments(std::move(arguments))
{
    m_process.setProcessChannelMode(QProcess::ForwardedErrorChannel);
    connect(&m_process, &QProcess::readyReadStandardOutput, this, &InnerServer::readLines);
    connect(&m_process, &QProcess::errorOccurred, this, [this](QProcess::ProcessError error) {
        if (error == QProcess::FailedToStart)
            fail(QStringLiteral("the inner server %1 could not be started: %2")
                     .arg(m_program, m_process.errorString()));
    });
    connect(&m_process, &QProcess::finished, this, [this](int code, QProcess::ExitStatus status) {
        readLines();
        fail(status == QProcess::CrashExit
                 ? QStringLiteral("the inner server %1 crashed").arg(m_program)
                 : QStringLiteral("the inner server %1 exited with status %2")
                       .arg(m_program)
                       .arg(code));
    });
}

InnerServer::~InnerServer()
{
    if (m_process.state() == QProcess::NotRunning)
        return;
    m_process.disconnect(this);
    m_process.closeWriteChannel(); // an MCP server ends when its stdin does
    if (!m_process.waitForFinished(2'000)) {
        m_process.terminate();
        if (!m_process.waitForFinished(2'000))
            m_process.kill();
    }
}

void InnerServer::start()
{
    m_alive = true;
    m_process.start(m_program, m_arguments);
}

void InnerServer::send(const nlohmann::json &message)
{
    if (!m_alive)
        return;
    m_process.write(QByteArray::fromStdString(message.dump()) + '\n');
}

void InnerServer::readLines()
{
    m_partial += m_process.readAllStandardOutput();
    qsizetype newline = 0;
    while ((newline = m_partial.indexOf('\n')) >= 0) {
        const QByteArray line = m_partial.left(newline).trimmed();
        m_partial.remove(0, newline + 1);
        if (line.isEmpty())
            continue;
        const nlohmann::json parsed =
            nlohmann::json::parse(line.begin(), line.end(), nullptr, false);
        if (!parsed.is_discarded())
            emit message(parsed);
    }
}

void InnerServer::fail(const QString &why)
{
    if (!m_alive)
        return;
    m_alive = false;
    emit died(why);
}
