#include "webhookpayload.h"

#include <QDateTime>
#include <QMessageAuthenticationCode>
#include <QUuid>

namespace leasehold {

using nlohmann::json;

QByteArray webhookBody(const WebhookEvent &event, const std::string &deliveryId,
                       const std::string &format)
{
    if (format == "slack") {
        const json body = {{"text", "[leasehold] " + event.name + ": " + event.summary},
                           {"id", deliveryId},
                           {"event", event.name}};
        return QByteArray::fromStdString(body.dump(-1, ' ', false, json::error_handler_t::replace));
    }
    const QString timestamp =
        QDateTime::fromMSecsSinceEpoch(event.at, Qt::UTC).toString(Qt::ISODateWithMs);
    const json body = {{"id", deliveryId},        {"timestamp", timestamp.toStdString()},
                       {"at", event.at},          {"event", event.name},
                       {"kind", event.kind},      {"summary", event.summary},
                       {"details", event.details}};
    return QByteArray::fromStdString(body.dump(-1, ' ', false, json::error_handler_t::replace));
}

QByteArray webhookSignature(const QByteArray &secret, std::int64_t unixSeconds,
                            const QByteArray &body)
{
    const QByteArray t = QByteArray::number(qint64(unixSeconds));
    QMessageAuthenticationCode mac(QCryptographicHash::Sha256, secret);
    mac.addData(t);
    mac.addData(".");
    mac.addData(body);
    return "t=" + t + ",v1=" + mac.result().toHex();
}

std::string newDeliveryId()
{
    return QUuid::createUuid().toString(QUuid::WithoutBraces).toStdString();
}

} // namespace leasehold
