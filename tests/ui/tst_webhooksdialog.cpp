// The console's Webhooks dialog against a running service: it lists the endpoints (the config
// file's too, which it cannot remove), refuses a bad one naming the field, adds a good one with
// its secret never shown back, and removes it. The receiver is never reached here: deliveries
// are tests/webhooks' and tests/process' business.

#include "consoletest.h"
#include "webhooksdialog.h"

#include <QTest>

using namespace consoletest;

class TstWebhooksDialog : public QObject
{
    Q_OBJECT

private slots:
    void listsAddsRefusesAndRemoves();
};

void TstWebhooksDialog::listsAddsRefusesAndRemoves()
{
    ConsoleFixture f(false, [](AppOptions &o) {
        o.webhooks.push_back({QStringLiteral("http://127.0.0.1:9/configured"),
                              QStringLiteral("configured-secret"),
                              {},
                              QStringLiteral("json")});
    });
    QVERIFY(f.started);
    WebhooksDialog dialog(f.link.get());
    QTRY_COMPARE_WITH_TIMEOUT(dialog.rowCount(), 1, 5'000);

    dialog.setSpec(QStringLiteral("http://127.0.0.1:9/added"), QStringLiteral("short"), QString());
    dialog.add();
    QTRY_VERIFY_WITH_TIMEOUT(dialog.status().contains("secret must be"), 5'000);

    dialog.setSpec(QStringLiteral("http://127.0.0.1:9/added"), QStringLiteral("a-long-secret"),
                   QStringLiteral("deadlock, store"));
    dialog.add();
    QTRY_COMPARE_WITH_TIMEOUT(dialog.rowCount(), 2, 5'000);
    QVERIFY(dialog.status().startsWith("Added a webhook"));

    // The one added at run time comes after the configured one; only it can be removed.
    dialog.selectRow(0);
    dialog.removeSelected();
    dialog.selectRow(1);
    dialog.removeSelected();
    QTRY_COMPARE_WITH_TIMEOUT(dialog.rowCount(), 1, 5'000);
    QVERIFY(dialog.status().startsWith("Removed webhook"));
}

QTEST_MAIN(TstWebhooksDialog)
#include "tst_webhooksdialog.moc"
