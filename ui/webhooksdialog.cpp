#include "webhooksdialog.h"

#include "enginelink.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QTableWidget>
#include <QTimer>
#include <QVBoxLayout>

using namespace leasehold;

WebhooksDialog::WebhooksDialog(EngineLink *link, QWidget *parent)
    : QDialog(parent)
    , m_link(link)
    , m_table(new QTableWidget(0, 7, this))
    , m_recent(new QPlainTextEdit(this))
    , m_url(new QLineEdit(this))
    , m_secret(new QLineEdit(this))
    , m_events(new QLineEdit(this))
    , m_format(new QComboBox(this))
    , m_remove(new QPushButton(tr("Remove"), this))
    , m_status(new QLabel(this))
{
    setWindowTitle(tr("Webhooks"));
    setObjectName(QStringLiteral("webhooksDialog"));
    resize(900, 560);
    m_table->setHorizontalHeaderLabels({tr("ID"), tr("URL"), tr("Events"), tr("Format"),
                                        tr("Pending"), tr("Delivered"), tr("Failed (1 h)")});
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->horizontalHeader()->setSectionResizeMode(1, QHeaderView::Stretch);
    m_table->verticalHeader()->hide();
    m_recent->setReadOnly(true);
    m_recent->setPlaceholderText(tr("The selected endpoint's last deliveries"));
    m_secret->setEchoMode(QLineEdit::Password);
    m_url->setPlaceholderText(QStringLiteral("https://hooks.example/leasehold"));
    m_secret->setPlaceholderText(tr("8 to 512 characters; the receiver checks signatures"));
    m_events->setPlaceholderText(
        tr("all, or: deadlock, expired, force_release, release_request, suspended, store, "
           "leader, hot_resource"));
    m_format->addItems({QStringLiteral("json"), QStringLiteral("slack")});
    m_status->setWordWrap(true);

    auto *form = new QFormLayout;
    form->addRow(tr("URL"), m_url);
    form->addRow(tr("Secret"), m_secret);
    form->addRow(tr("Events"), m_events);
    form->addRow(tr("Format"), m_format);
    auto *addButton = new QPushButton(tr("Add"), this);
    addButton->setObjectName(QStringLiteral("addWebhook"));
    m_remove->setObjectName(QStringLiteral("removeWebhook"));
    m_remove->setEnabled(false);
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    buttons->addButton(addButton, QDialogButtonBox::ActionRole);
    buttons->addButton(m_remove, QDialogButtonBox::ActionRole);

    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_table, 3);
    layout->addWidget(m_recent, 1);
    layout->addLayout(form);
    layout->addWidget(m_status);
    layout->addWidget(buttons);

    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(addButton, &QPushButton::clicked, this, &WebhooksDialog::add);
    connect(m_remove, &QPushButton::clicked, this, &WebhooksDialog::removeSelected);
    connect(m_table, &QTableWidget::itemSelectionChanged, this, &WebhooksDialog::showSelected);
    connect(m_link, &EngineLink::webhooksListed, this, &WebhooksDialog::showWebhooks);
    connect(m_link, &EngineLink::webhookDone, this, &WebhooksDialog::onDone);
    // Deliveries move on their own: the list is asked for again while the dialog is open.
    auto *refresh = new QTimer(this);
    refresh->setInterval(2000);
    connect(refresh, &QTimer::timeout, m_link, &EngineLink::listWebhooks);
    refresh->start();
    m_link->listWebhooks();
}

int WebhooksDialog::rowCount() const
{
    return m_table->rowCount();
}

QString WebhooksDialog::status() const
{
    return m_status->text();
}

void WebhooksDialog::setSpec(const QString &url, const QString &secret, const QString &events)
{
    m_url->setText(url);
    m_secret->setText(secret);
    m_events->setText(events);
}

void WebhooksDialog::selectRow(int row)
{
    m_table->selectRow(row);
}

void WebhooksDialog::showWebhooks(const ConsoleWebhooks &webhooks)
{
    const QString selected = m_table->currentRow() >= 0 && m_table->currentRow() < m_webhooks.size()
                                 ? m_webhooks[m_table->currentRow()].id
                                 : QString();
    m_webhooks = webhooks;
    m_table->setRowCount(int(webhooks.size()));
    for (int row = 0; row < webhooks.size(); ++row) {
        const ConsoleWebhook &w = webhooks[row];
        const QStringList cells = {w.id + (w.configured ? tr(" (config file)") : QString()),
                                   w.url,
                                   w.events,
                                   w.format,
                                   QString::number(w.pending),
                                   QString::number(w.delivered),
                                   QString::number(w.failedLastHour)};
        for (int column = 0; column < cells.size(); ++column) {
            auto *item = new QTableWidgetItem(cells[column]);
            if (column == 6 && w.failedLastHour > 0)
                item->setForeground(Qt::red);
            m_table->setItem(row, column, item);
        }
        if (w.id == selected)
            m_table->selectRow(row);
    }
    showSelected();
}

void WebhooksDialog::showSelected()
{
    const int row = m_table->currentRow();
    const bool valid = row >= 0 && row < m_webhooks.size() && !m_table->selectedItems().isEmpty();
    m_remove->setEnabled(valid && !m_webhooks[row].configured);
    m_recent->setPlainText(valid ? m_webhooks[row].recent.join('\n') : QString());
}

void WebhooksDialog::add()
{
    ConsoleWebhookSpec spec;
    spec.url = m_url->text().trimmed();
    spec.secret = m_secret->text();
    for (const QString &e : m_events->text().split(',', Qt::SkipEmptyParts))
        spec.events << e.trimmed();
    spec.format = m_format->currentText();
    m_status->setText(tr("Adding…"));
    m_link->addWebhook(spec);
}

void WebhooksDialog::removeSelected()
{
    const int row = m_table->currentRow();
    if (row < 0 || row >= m_webhooks.size() || m_webhooks[row].configured)
        return;
    m_status->setText(tr("Removing…"));
    m_link->removeWebhook(m_webhooks[row].id);
}

void WebhooksDialog::onDone(const QString &summary, const QString &error)
{
    if (!error.isEmpty()) {
        m_status->setText(tr("Not done: %1").arg(error));
        return;
    }
    m_status->setText(summary);
    m_secret->clear(); // never kept, never shown back
    m_url->clear();
    m_events->clear();
    m_link->listWebhooks();
}
