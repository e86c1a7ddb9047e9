#pragma once

#include "options.h"

#include <QThread>

#include <memory>

class Service;

// The engine thread of a windowed run: the Service (engine, HTTP server, store) lives and runs
// on it, so a busy console never delays an agent and a flood of agents never freezes the window.
// The console talks to it only through queued calls and the frames its feed publishes.
//
// Thread: created, started and stopped from the main thread.
class EngineThread
{
public:
    explicit EngineThread(AppOptions options);
    ~EngineThread();
    EngineThread(const EngineThread &) = delete;
    EngineThread &operator=(const EngineThread &) = delete;

    // Starts the thread and the service on it; returns once it listens (0) or failed (the
    // service's exit code).
    int start();
    // Answers every parked wait, commits the store and ends the thread. Idempotent.
    void stop();

    // Runs `call(service)` on the engine thread and waits for it.
    template<class F> void call(F &&call)
    {
        QMetaObject::invokeMethod(
            m_anchor, [&] { call(*m_service); }, Qt::BlockingQueuedConnection);
    }

private:
    AppOptions m_options;
    QThread m_thread;
    QObject *m_anchor = nullptr; // lives on m_thread; the target of queued calls
    std::unique_ptr<Service> m_service;
};
