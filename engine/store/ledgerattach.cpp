#include "ledgerattach.h"

#include <QSqlDatabase>
#include <QSqlQuery>
#include <QVariant>

namespace leasehold::ledgerparts {

bool attached(const QSqlDatabase &db, const char *schema)
{
    QSqlQuery q(db);
    q.prepare(QStringLiteral("SELECT 1 FROM pragma_database_list WHERE name = ?"));
    q.addBindValue(QLatin1String(schema));
    return q.exec() && q.next();
}

bool attachArchive(QSqlDatabase &db, const QString &archivePath)
{
    QSqlQuery q(db);
    q.prepare(QStringLiteral("ATTACH DATABASE ? AS %1").arg(QLatin1String(kArchive)));
    q.addBindValue(archivePath);
    return q.exec();
}

} // namespace leasehold::ledgerparts
