#include "stdiochannel.h"

#include <cerrno>
#include <cstdio>
#include <unistd.h>

StdioChannel::StdioChannel(QObject *parent)
    : QObject(parent)
{}

StdioChannel::~StdioChannel() = default;

void StdioChannel::start()
{
    m_notifier = std::make_unique<QSocketNotifier>(STDIN_FILENO, QSocketNotifier::Read);
    connect(m_notifier.get(), &QSocketNotifier::activated, this, &StdioChannel::readAvailable);
}

void StdioChannel::readAvailable()
{
    char buffer[65536];
    const ssize_t n = ::read(STDIN_FILENO, buffer, sizeof buffer);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (n <= 0) {
        m_notifier->setEnabled(false);
        emit closed();
        return;
    }
    m_partial.append(buffer, std::size_t(n));
    std::size_t newline = 0;
    while ((newline = m_partial.find('\n')) != std::string::npos) {
        const std::string line = m_partial.substr(0, newline);
        m_partial.erase(0, newline + 1);
        if (line.find_first_not_of(" \t\r") == std::string::npos)
            continue;
        emit message(nlohmann::json::parse(line, nullptr, false));
    }
}

void StdioChannel::send(const nlohmann::json &message)
{
    const std::string line = message.dump() + '\n';
    std::fwrite(line.data(), 1, line.size(), stdout);
    std::fflush(stdout);
}
