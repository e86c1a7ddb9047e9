#include "ledgerformat.h"

#include "ledgerjson.h"

namespace leasehold {

namespace {

QByteArray csvField(const std::string &text)
{
    QByteArray field = QByteArray::fromStdString(text);
    if (field.contains(',') || field.contains('"') || field.contains('\n') || field.contains('\r'))
        field = '"' + field.replace("\"", "\"\"") + '"';
    return field;
}

} // namespace

QByteArray ledgerJsonLines(const std::vector<LedgerEvent> &events)
{
    QByteArray out;
    for (const LedgerEvent &e : events)
        out += QByteArray::fromStdString(toJson(e).dump()) + '\n';
    return out;
}

QByteArray ledgerCsv(const std::vector<LedgerEvent> &events, bool header)
{
    QByteArray out = header ? "seq,at,kind,actorDid,resource,leaseId,token,reason,detail\r\n" : "";
    for (const LedgerEvent &e : events)
        out += QByteArray::number(e.seq) + ',' + QByteArray::number(e.at) + ',' +
               csvField(std::string(eventKindName(e.kind))) + ',' + csvField(e.actorDid) + ',' +
               csvField(e.resource) + ',' + csvField(e.leaseId) + ',' +
               QByteArray::number(e.token) + ',' + csvField(e.reason) + ',' + csvField(e.detail) +
               "\r\n";
    return out;
}

} // namespace leasehold
