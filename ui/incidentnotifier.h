#pragma once

#include "consolestate.h"

#include <QElapsedTimer>
#include <QObject>

class QSystemTrayIcon;

// Raises a desktop notification for incidents (a deadlock refused, a lease expired without
// release, an agent suspended): through the system tray where there is one, otherwise as a
// banner the window shows. At most one notification every few seconds; incidents in between
// are summed up in the next one, so a storm does not flood the desktop.
//
// Thread: the UI thread.
class IncidentNotifier : public QObject
{
    Q_OBJECT

public:
    explicit IncidentNotifier(QObject *parent = nullptr);

    void report(const std::vector<Incident> &incidents);
    bool usesTray() const { return m_tray != nullptr; }
    int notifications() const { return m_notifications; }

    static constexpr int kQuietMs = 4000;

signals:
    // The text to show when there is no tray (always emitted, so the window can log it too).
    void notified(const QString &title, const QString &text, Incident::Kind kind);
    // The operator clicked the tray icon or the last notification: show the window (and the
    // view of that incident).
    void openRequested(Incident::Kind kind);

private:
    void flush();

    QSystemTrayIcon *m_tray = nullptr;
    QElapsedTimer m_sinceLast;
    std::vector<Incident> m_pending;
    bool m_flushScheduled = false;
    int m_notifications = 0;
    Incident::Kind m_lastKind = Incident::Kind::Deadlock;
};
