#pragma once

#include "ctl.h"
#include "ctlclient.h"

#include <QTextStream>

#include <functional>

class QCommandLineParser;

// The ctl subcommands: each makes its requests, prints a table (or JSON) and returns the exit
// code; one place (failure()) turns unreachable instances, bad keys and refusals into codes.
class CtlCommands
{
public:
    CtlCommands(CtlClient &client, const QCommandLineParser &parser, bool asJson);

    CtlExit run(const QStringList &args);

private:
    CtlExit status();
    CtlExit holders();
    CtlExit wait();
    // Posts an admin lever; prints done(reply) (or the reply with --json).
    using Describe = std::function<QString(const nlohmann::json &reply)>;
    CtlExit lever(const QString &route, const nlohmann::json &body, const Describe &done);
    CtlExit ledger();
    void printEvent(const nlohmann::json &event);
    // `ledger --follow` once caught up: prints the watch stream's events after `since` (and
    // moves it on) until interrupted (a code) or the stream cannot resume (nothing: page again).
    std::optional<CtlExit> followLedger(qulonglong &since);
    // `watch`: the leases (--prefix), then each change, until interrupted.
    CtlExit watch();
    CtlExit keysAdd(const QString &did);
    // ctldoctor.cpp: `doctor` (findings, each with its fix; exit 1 when one needs acting on)
    // and `sweep --not-live-for D [--dry-run]`.
    CtlExit doctor();
    CtlExit sweep();
    // ctlwebhooks.cpp: `webhooks add|list|remove|test`; a test follows its first attempt.
    CtlExit webhooks(const QStringList &args);
    CtlExit followTest(const QString &id, const QString &deliveryId);
    // "90s", "10m", "2h", "1d" or bare seconds, in ms.
    static std::optional<std::int64_t> parseDurationMs(const QString &text);

    // Ctrl-C and SIGTERM end a command that follows the instance (ledger --follow, watch).
    static void catchInterrupts();
    static bool interrupted();

    // Nothing when `reply` is a success; otherwise prints why and returns the code.
    std::optional<CtlExit> failure(const CtlClient::Reply &reply);
    void printJson(const nlohmann::json &value);
    // "4s", "3m12s", "2h05m": how far `ms` is, for tables.

    CtlClient &m_client;
    const QCommandLineParser &m_parser;
    bool m_json;
    bool m_printedHeader = false;
    QTextStream m_out;
    QTextStream m_err;
};
