// CtlCommands: what every subcommand prints the same way — a failed reply as an exit code and a
// sentence, JSON, a ledger event as a row.

#include "ctlcommands.h"

#include "ledgerjson.h"
#include "refusals.h"
#include "texttable.h"
#include "wording.h"

#include <QDateTime>

using namespace leasehold;
using nlohmann::json;

namespace {

QString text(const json &value)
{
    return cellText(value);
}

} // namespace

std::optional<CtlExit> CtlCommands::failure(const CtlClient::Reply &reply)
{
    if (reply.status >= 200 && reply.status < 300)
        return std::nullopt;
    const QString why =
        reply.body.is_object() && reply.body.contains("error")     ? text(reply.body["error"])
        : reply.body.is_object() && reply.body.contains("message") ? text(reply.body["message"])
                                                                   : QString();
    if (reply.status == 0) {
        m_err << "leasehold ctl: cannot reach " << m_client.base().toString() << ": "
              << reply.networkError << "\n";
        return CtlExit::Unreachable;
    }
    // A refusal says what it is; the table says whether it is the caller's doing.
    if (const auto reason = reply.body.is_object() ? refusalFromName(reply.body.value("reason", ""))
                                                   : std::nullopt) {
        m_err << "leasehold ctl: " << why << "\n";
        return *reason == RefusalReason::StoreUnavailable ? CtlExit::Degraded : CtlExit::Refused;
    }
    if (reply.status == 401 || reply.status == 403) {
        m_err << "leasehold ctl: "
              << (reply.status == 401 ? "no valid key" : "this key may not do that")
              << (why.isEmpty() ? QString() : ": " + why)
              << " (use --key or LEASEHOLD_KEY with an admin key)\n";
        return CtlExit::Auth;
    }
    if (reply.status == 409 || reply.status == 404 || reply.status == 400) {
        m_err << "leasehold ctl: "
              << (why.isEmpty() ? QStringLiteral("refused (HTTP %1)").arg(reply.status) : why)
              << "\n";
        return reply.status == 400 ? CtlExit::Usage : CtlExit::Refused;
    }
    m_err << "leasehold ctl: unexpected answer (HTTP " << reply.status << ")\n";
    return CtlExit::Unexpected;
}

void CtlCommands::printJson(const json &value)
{
    m_out << QString::fromStdString(value.dump(2)) << "\n";
}

void CtlCommands::printEvent(const json &e)
{
    if (m_json) {
        m_out << QString::fromStdString(e.dump()) << "\n";
        return;
    }
    if (!m_printedHeader) {
        m_out << "SEQ\tTIME\tKIND\tAGENT\tRESOURCE\tTOKEN\tREASON\tDETAIL\n";
        m_printedHeader = true;
    }
    QString kind = text(e["kind"]);
    kind.remove(QStringLiteral("coordination.lease."));
    m_out << text(e["seq"]) << '\t'
          << QDateTime::fromMSecsSinceEpoch(e.value("at", std::int64_t(0)))
                 .toString(QStringLiteral("HH:mm:ss.zzz"))
          << '\t' << kind << '\t' << text(e["actorDid"]) << '\t' << text(e["resource"]) << '\t'
          << text(e["token"]) << '\t' << text(e["reason"]) << '\t'
          << eventSummary(ledgerEventFromJson(e).value_or(LedgerEvent{})) << '\n';
}
