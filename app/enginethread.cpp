#include "enginethread.h"

#include "service.h"

EngineThread::EngineThread(AppOptions options)
    : m_options(std::move(options))
{
    m_thread.setObjectName(QStringLiteral("engine"));
}

EngineThread::~EngineThread()
{
    stop();
}

int EngineThread::start()
{
    m_anchor = new QObject;
    m_anchor->moveToThread(&m_thread);
    m_thread.start();
    int code = 0;
    QMetaObject::invokeMethod(
        m_anchor,
        [&] {
            // Built on the engine thread, so it and everything it creates belong to it.
            m_service = std::make_unique<Service>(m_options);
            code = m_service->start();
        },
        Qt::BlockingQueuedConnection);
    return code;
}

void EngineThread::stop()
{
    if (!m_thread.isRunning())
        return;
    QMetaObject::invokeMethod(
        m_anchor,
        [&] {
            if (m_service)
                m_service->shutdown([] {});
            m_service.reset();
            delete m_anchor;
            m_anchor = nullptr;
        },
        Qt::BlockingQueuedConnection);
    m_thread.quit();
    m_thread.wait();
}
