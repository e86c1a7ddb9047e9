#include "ledgerformat.h"

#include "ledgerjson.h"
#include "wording.h"

namespace leasehold {

namespace {

QByteArray csvField(const std::string &text)
{
    QByteArray field = QByteArray::fromStdString(text);
    if (field.contains(',') || field.contains('"') || field.contains('\n') || field.contains('\r'))
        field = '"' + field.replace("\"", "\"\"") + '"';
    return field;
}

QByteArray csvNumber(std::int64_t n, bool present)
{
    return present ? QByteArray::number(qlonglong(n)) : QByteArray();
}

// The cycle as agent=resource pairs separated by spaces, in order from the requester: DIDs
// may not contain '=', ',' or whitespace, so the cell reads back unambiguously.
std::string cycleCell(const std::vector<CycleStep> &cycle)
{
    std::string out;
    for (const CycleStep &s : cycle)
        out += (out.empty() ? "" : " ") + s.agent + "=" + s.resource;
    return out;
}

const char *const kLedgerCsvHeader =
    "seq,at,kind,actorDid,resource,leaseId,token,reason,ttlMs,op,mode,waitedMs,holder,cycle,by,"
    "whileDown,target,released,suspended,paused,pinId,before,after,to,via,pid,command,heldBackMs,"
    "requestId,urgency,deadlineAt,requester,summary\r\n";

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
    QByteArray out = header ? kLedgerCsvHeader : "";
    for (const LedgerEvent &e : events) {
        const EventFacts &f = e.facts;
        out += QByteArray::number(e.seq) + ',' + QByteArray::number(e.at) + ',' +
               csvField(std::string(eventKindName(e.kind))) + ',' + csvField(e.actorDid) + ',' +
               csvField(e.resource) + ',' + csvField(e.leaseId) + ',' +
               csvNumber(qlonglong(e.token), e.token != 0) + ',' + csvField(e.reason) + ',' +
               csvNumber(e.ttlMs, e.ttlMs > 0) + ',' + csvField(f.op) + ',' +
               (carriesMode(e)
                    ? QByteArray(modeName(f.mode).data(), qsizetype(modeName(f.mode).size()))
                    : QByteArray()) +
               ',' + csvNumber(f.waitedMs, f.waitedMs >= 0) + ',' + csvField(f.holder) + ',' +
               csvField(cycleCell(f.cycle)) + ',' + csvField(f.by) + ',' +
               (f.whileDown ? "true" : "") + ',' + csvField(f.target) + ',' +
               csvNumber(f.released, f.released >= 0) + ',' +
               (e.kind == EventKind::AdminSuspend ? (f.suspended ? "true" : "false") : "") + ',' +
               (e.kind == EventKind::AdminPause ? (f.paused ? "true" : "false") : "") + ',' +
               csvField(f.pinId) + ',' + csvField(f.before) + ',' + csvField(f.after) + ',' +
               csvField(f.to) + ',' + csvField(f.via) + ',' + csvNumber(f.pid, f.pid >= 0) + ',' +
               csvField(f.command) + ',' + csvNumber(f.heldBackMs, f.heldBackMs > 0) + ',' +
               csvField(f.requestId) + ',' + csvField(f.urgency) + ',' +
               csvNumber(f.deadlineAt, f.deadlineAt > 0) + ',' + csvField(f.requester) + ',' +
               csvField(eventSummary(e).toStdString()) + "\r\n";
    }
    return out;
}

} // namespace leasehold
