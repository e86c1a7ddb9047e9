#include "webhookoutbox.h"

#include <QFile>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QStringList>
#include <QUuid>
#include <QVariant>

namespace leasehold {

const char *deliveryStateName(WebhookDelivery::State state)
{
    switch (state) {
    case WebhookDelivery::State::Pending:
        return "pending";
    case WebhookDelivery::State::Delivered:
        return "delivered";
    case WebhookDelivery::State::Failed:
        return "failed";
    }
    return "pending";
}

namespace {

WebhookDelivery::State stateFromName(const QString &name)
{
    if (name == QLatin1String("delivered"))
        return WebhookDelivery::State::Delivered;
    if (name == QLatin1String("failed"))
        return WebhookDelivery::State::Failed;
    return WebhookDelivery::State::Pending;
}

QString joined(const std::vector<std::string> &items)
{
    QStringList list;
    for (const std::string &s : items)
        list << QString::fromStdString(s);
    // Never a null string: Qt binds that as NULL, and the columns are NOT NULL ("" is all).
    return list.isEmpty() ? QStringLiteral("") : list.join(QLatin1Char(','));
}

std::vector<std::string> split(const QString &text)
{
    std::vector<std::string> out;
    for (const QString &s : text.split(QLatin1Char(','), Qt::SkipEmptyParts))
        out.push_back(s.toStdString());
    return out;
}

const char *const kSchema[] = {
    "PRAGMA journal_mode=WAL",
    "PRAGMA synchronous=FULL",
    "CREATE TABLE IF NOT EXISTS webhook_endpoints (id TEXT PRIMARY KEY, url TEXT NOT NULL, "
    "secret TEXT NOT NULL, events TEXT NOT NULL, format TEXT NOT NULL, configured INTEGER NOT "
    "NULL, created_at INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS webhook_deliveries (seq INTEGER PRIMARY KEY AUTOINCREMENT, "
    "id TEXT NOT NULL UNIQUE, endpoint TEXT NOT NULL, event TEXT NOT NULL, body BLOB NOT NULL, "
    "created_at INTEGER NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, next_at INTEGER NOT "
    "NULL, state TEXT NOT NULL, last_status INTEGER NOT NULL DEFAULT 0, last_error TEXT NOT "
    "NULL DEFAULT '', done_at INTEGER NOT NULL DEFAULT 0)",
    "CREATE INDEX IF NOT EXISTS webhook_by_endpoint ON webhook_deliveries (endpoint, state, seq)",
};

const char *const kColumns = "seq, id, endpoint, event, created_at, attempts, next_at, state, "
                             "last_status, last_error, done_at";

WebhookDelivery readDelivery(const QSqlQuery &q, bool withBody)
{
    WebhookDelivery d;
    d.seq = q.value(0).toLongLong();
    d.id = q.value(1).toString().toStdString();
    d.endpoint = q.value(2).toString().toStdString();
    d.event = q.value(3).toString().toStdString();
    d.createdAt = q.value(4).toLongLong();
    d.attempts = q.value(5).toLongLong();
    d.nextAt = q.value(6).toLongLong();
    d.state = stateFromName(q.value(7).toString());
    d.lastStatus = q.value(8).toInt();
    d.lastError = q.value(9).toString().toStdString();
    d.doneAt = q.value(10).toLongLong();
    if (withBody)
        d.body = q.value(11).toByteArray();
    return d;
}

} // namespace

WebhookOutbox::WebhookOutbox()
    : m_connection(QStringLiteral("webhooks-") + QUuid::createUuid().toString(QUuid::Id128))
{}

WebhookOutbox::~WebhookOutbox()
{
    if (QSqlDatabase::contains(m_connection)) {
        QSqlDatabase::database(m_connection, false).close();
        QSqlDatabase::removeDatabase(m_connection);
    }
}

bool WebhookOutbox::open(const QString &path, QString *error)
{
    QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), m_connection);
    db.setDatabaseName(path);
    db.setConnectOptions(QStringLiteral("QSQLITE_BUSY_TIMEOUT=2000"));
    if (!db.open()) {
        *error = QStringLiteral("cannot open %1: %2").arg(path, db.lastError().text());
        return false;
    }
    QFile::setPermissions(path, QFileDevice::ReadOwner | QFileDevice::WriteOwner);
    QSqlQuery q(db);
    for (const char *statement : kSchema) {
        if (!q.exec(QLatin1String(statement))) {
            *error = QStringLiteral("cannot prepare %1: %2").arg(path, q.lastError().text());
            return false;
        }
    }
    return true;
}

std::vector<WebhookEndpoint> WebhookOutbox::endpoints() const
{
    std::vector<WebhookEndpoint> out;
    QSqlQuery q(QSqlDatabase::database(m_connection));
    q.exec(QStringLiteral("SELECT id, url, secret, events, format, configured, created_at FROM "
                          "webhook_endpoints ORDER BY created_at, id"));
    while (q.next())
        out.push_back({q.value(0).toString().toStdString(), q.value(1).toString().toStdString(),
                       q.value(2).toString().toStdString(), split(q.value(3).toString()),
                       q.value(4).toString().toStdString(), q.value(5).toBool(),
                       q.value(6).toLongLong()});
    return out;
}

bool WebhookOutbox::putEndpoint(const WebhookEndpoint &e)
{
    QSqlQuery q(QSqlDatabase::database(m_connection));
    q.prepare(QStringLiteral("INSERT OR REPLACE INTO webhook_endpoints (id, url, secret, events, "
                             "format, configured, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)"));
    q.addBindValue(QString::fromStdString(e.id));
    q.addBindValue(QString::fromStdString(e.url));
    q.addBindValue(QString::fromStdString(e.secret));
    q.addBindValue(joined(e.events));
    q.addBindValue(QString::fromStdString(e.format));
    q.addBindValue(e.configured ? 1 : 0);
    q.addBindValue(qint64(e.createdAt));
    if (q.exec())
        return true;
    m_lastError = q.lastError().text();
    return false;
}

bool WebhookOutbox::removeEndpoint(const std::string &id)
{
    QSqlDatabase db = QSqlDatabase::database(m_connection);
    db.transaction();
    QSqlQuery q(db);
    q.prepare(QStringLiteral("DELETE FROM webhook_endpoints WHERE id = ?"));
    q.addBindValue(QString::fromStdString(id));
    bool ok = q.exec();
    q.prepare(QStringLiteral("DELETE FROM webhook_deliveries WHERE endpoint = ?"));
    q.addBindValue(QString::fromStdString(id));
    ok = q.exec() && ok;
    return ok ? db.commit() : (db.rollback(), false);
}

bool WebhookOutbox::enqueue(const std::vector<WebhookDelivery> &deliveries)
{
    QSqlDatabase db = QSqlDatabase::database(m_connection);
    if (!db.transaction())
        return false;
    QSqlQuery q(db);
    q.prepare(QStringLiteral("INSERT INTO webhook_deliveries (id, endpoint, event, body, "
                             "created_at, next_at, state) VALUES (?, ?, ?, ?, ?, ?, 'pending')"));
    for (const WebhookDelivery &d : deliveries) {
        q.bindValue(0, QString::fromStdString(d.id));
        q.bindValue(1, QString::fromStdString(d.endpoint));
        q.bindValue(2, QString::fromStdString(d.event));
        q.bindValue(3, d.body);
        q.bindValue(4, qint64(d.createdAt));
        q.bindValue(5, qint64(d.nextAt));
        if (!q.exec()) {
            m_lastError = q.lastError().text();
            db.rollback();
            return false;
        }
    }
    return db.commit();
}

std::optional<WebhookDelivery> WebhookOutbox::head(const std::string &endpoint) const
{
    QSqlQuery q(QSqlDatabase::database(m_connection));
    q.prepare(QStringLiteral("SELECT %1, body FROM webhook_deliveries WHERE endpoint = ? AND "
                             "state = 'pending' ORDER BY seq LIMIT 1")
                  .arg(QLatin1String(kColumns)));
    q.addBindValue(QString::fromStdString(endpoint));
    if (!q.exec() || !q.next())
        return std::nullopt;
    return readDelivery(q, true);
}

bool WebhookOutbox::markDelivered(std::int64_t seq, int status, std::int64_t at)
{
    QSqlQuery q(QSqlDatabase::database(m_connection));
    q.prepare(QStringLiteral("UPDATE webhook_deliveries SET state = 'delivered', attempts = "
                             "attempts + 1, last_status = ?, last_error = '', done_at = ? WHERE "
                             "seq = ?"));
    q.addBindValue(status);
    q.addBindValue(qint64(at));
    q.addBindValue(qint64(seq));
    return q.exec();
}

bool WebhookOutbox::markRetry(std::int64_t seq, std::int64_t attempts, std::int64_t nextAt,
                              int status, const std::string &error)
{
    QSqlQuery q(QSqlDatabase::database(m_connection));
    q.prepare(QStringLiteral("UPDATE webhook_deliveries SET attempts = ?, next_at = ?, "
                             "last_status = ?, last_error = ? WHERE seq = ?"));
    q.addBindValue(qint64(attempts));
    q.addBindValue(qint64(nextAt));
    q.addBindValue(status);
    q.addBindValue(QString::fromStdString(error));
    q.addBindValue(qint64(seq));
    return q.exec();
}

bool WebhookOutbox::markFailed(std::int64_t seq, std::int64_t attempts, int status,
                               const std::string &error, std::int64_t at)
{
    QSqlQuery q(QSqlDatabase::database(m_connection));
    q.prepare(QStringLiteral("UPDATE webhook_deliveries SET state = 'failed', attempts = ?, "
                             "last_status = ?, last_error = ?, done_at = ? WHERE seq = ?"));
    q.addBindValue(qint64(attempts));
    q.addBindValue(status);
    q.addBindValue(QString::fromStdString(error));
    q.addBindValue(qint64(at));
    q.addBindValue(qint64(seq));
    return q.exec();
}

std::vector<WebhookDelivery> WebhookOutbox::recent(const std::string &endpoint, int limit) const
{
    std::vector<WebhookDelivery> out;
    QSqlQuery q(QSqlDatabase::database(m_connection));
    q.prepare(QStringLiteral("SELECT %1 FROM webhook_deliveries WHERE endpoint = ? ORDER BY seq "
                             "DESC LIMIT ?")
                  .arg(QLatin1String(kColumns)));
    q.addBindValue(QString::fromStdString(endpoint));
    q.addBindValue(limit);
    if (q.exec())
        while (q.next())
            out.push_back(readDelivery(q, false));
    return out;
}

WebhookTally WebhookOutbox::tally(const std::string &endpoint, std::int64_t failedSince) const
{
    WebhookTally t;
    QSqlQuery q(QSqlDatabase::database(m_connection));
    q.prepare(QStringLiteral(
        "SELECT SUM(state = 'pending'), SUM(state = 'delivered'), SUM(state = 'failed'), "
        "SUM(state = 'failed' AND done_at >= ?) FROM webhook_deliveries WHERE endpoint = ?"));
    q.addBindValue(qint64(failedSince));
    q.addBindValue(QString::fromStdString(endpoint));
    if (q.exec() && q.next())
        t = {q.value(0).toLongLong(), q.value(1).toLongLong(), q.value(2).toLongLong(),
             q.value(3).toLongLong()};
    return t;
}

void WebhookOutbox::prune(std::int64_t before)
{
    QSqlQuery q(QSqlDatabase::database(m_connection));
    q.prepare(
        QStringLiteral("DELETE FROM webhook_deliveries WHERE state != 'pending' AND done_at < ?"));
    q.addBindValue(qint64(before));
    q.exec();
}

} // namespace leasehold
