#pragma once

#include <QList>
#include <QMetaType>
#include <QString>
#include <QStringList>

#include <functional>

namespace leasehold {

// One webhook endpoint as the console shows it: plain values (the console parses no JSON).
// `last` and `recent` describe deliveries in a few words ("delivered 4s ago", "pending, 3
// attempts (HTTP 503)"), newest first.
struct ConsoleWebhook
{
    QString id;
    QString url;
    QString events; // "all" or "deadlock, store"
    QString format;
    bool configured = false; // from the config file: changed there, not here
    qint64 pending = 0;
    qint64 delivered = 0;
    qint64 failed = 0;
    qint64 failedLastHour = 0;
    QStringList recent;
};
using ConsoleWebhooks = QList<ConsoleWebhook>;

// An endpoint the operator asks to add; the secret is passed on once and never kept here.
struct ConsoleWebhookSpec
{
    QString url;
    QString secret;
    QStringList events; // empty: all
    QString format = QStringLiteral("json");
};

// What the console's webhook levers reach: set by the app, which owns the delivery thread.
// Each answers later, on the engine thread: `list` with the endpoints, `add` and `remove` with
// an empty error when done (else what was wrong, naming the field).
struct WebhookLevers
{
    std::function<void(std::function<void(ConsoleWebhooks)>)> list;
    std::function<void(ConsoleWebhookSpec, std::function<void(QString error)>)> add;
    std::function<void(QString id, std::function<void(QString error)>)> remove;
};

} // namespace leasehold

Q_DECLARE_METATYPE(leasehold::ConsoleWebhooks)
