#pragma once

#include "consolewebhooks.h"

#include <QDialog>

class EngineLink;
class QComboBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QTableWidget;

// "Webhooks" (admin): the endpoints that are told of incidents (docs/webhooks.md), each with
// its tally and its last deliveries and failures, refreshed while the dialog is open; adds an
// endpoint (URL, secret, events, format) and removes a selected one. The secret goes to the
// engine once and is cleared from the field; it is never shown back.
//
// Thread: the UI thread; everything reaches the engine through EngineLink's queued levers.
class WebhooksDialog : public QDialog
{
    Q_OBJECT

public:
    explicit WebhooksDialog(EngineLink *link, QWidget *parent = nullptr);

    // For tests: the rows shown and the status line.
    int rowCount() const;
    QString status() const;
    void setSpec(const QString &url, const QString &secret, const QString &events);
    void add();
    void removeSelected();
    void selectRow(int row);

private:
    void showWebhooks(const leasehold::ConsoleWebhooks &webhooks);
    void showSelected();
    void onDone(const QString &summary, const QString &error);

    EngineLink *m_link;
    leasehold::ConsoleWebhooks m_webhooks;
    QTableWidget *m_table;
    QPlainTextEdit *m_recent;
    QLineEdit *m_url;
    QLineEdit *m_secret;
    QLineEdit *m_events;
    QComboBox *m_format;
    QPushButton *m_remove;
    QLabel *m_status;
};
