#include "incidentnotifier.h"

#include "wording.h"

#include <QGuiApplication>
#include <QSystemTrayIcon>
#include <QTimer>

IncidentNotifier::IncidentNotifier(QObject *parent)
    : QObject(parent)
{
    if (QSystemTrayIcon::isSystemTrayAvailable()) {
        m_tray = new QSystemTrayIcon(QGuiApplication::windowIcon(), this);
        m_tray->setToolTip(QStringLiteral("Leasehold"));
        connect(m_tray, &QSystemTrayIcon::messageClicked, this,
                [this] { emit openRequested(m_lastKind); });
        connect(m_tray, &QSystemTrayIcon::activated, this,
                [this] { emit openRequested(m_lastKind); });
        m_tray->show();
    }
}

void IncidentNotifier::report(const std::vector<Incident> &incidents)
{
    if (incidents.empty())
        return;
    m_pending.insert(m_pending.end(), incidents.begin(), incidents.end());
    if (!m_sinceLast.isValid() || m_sinceLast.elapsed() >= kQuietMs)
        return flush();
    if (!m_flushScheduled) {
        m_flushScheduled = true;
        QTimer::singleShot(int(kQuietMs - m_sinceLast.elapsed()), this, [this] {
            m_flushScheduled = false;
            flush();
        });
    }
}

void IncidentNotifier::flush()
{
    if (m_pending.empty())
        return;
    const Incident &first = m_pending.front();
    QString title;
    switch (first.kind) {
    case Incident::Kind::Deadlock:
        title = tr("Deadlock refused");
        break;
    case Incident::Kind::Expiry:
        title = tr("Lease expired without release");
        break;
    case Incident::Kind::Suspension:
        title = tr("Agent suspended");
        break;
    case Incident::Kind::Store:
        title = tr("State database");
        break;
    case Incident::Kind::Overdue:
        title = tr("Release request overdue");
        break;
    }
    QString text = first.text;
    if (m_pending.size() > 1)
        text += tr(" (and %1 more)")
                    .arg(leasehold::countOf(qint64(m_pending.size() - 1), "incident", "incidents"));
    if (m_tray)
        m_tray->showMessage(title, text, QSystemTrayIcon::Warning, 8000);
    m_lastKind = first.kind;
    emit notified(title, text, first.kind);
    ++m_notifications;
    m_pending.clear();
    m_sinceLast.start();
}
