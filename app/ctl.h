#pragma once

#include <QStringList>

#include <vector>

// `leasehold ctl`: a command-line client for a running instance, for scripts and incident
// response. It speaks the instance's REST API; the URL and key come from flags, then the
// environment (LEASEHOLD_URL, LEASEHOLD_KEY), then the config file and the data directory's
// key store. Tables for people by default, JSON with --json.
//
// Exit codes (CtlExit): 0 done; 1 the instance refused or found nothing; 2 bad usage; 3 the
// instance could not be reached; 4 the key was missing, wrong or not allowed; 5 an unexpected
// answer.
enum class CtlExit {
    Ok = 0,
    Refused = 1,
    Usage = 2,
    Unreachable = 3,
    Auth = 4,
    Unexpected = 5,
    Degraded = 6, // status: the service answers but cannot record grants (store unavailable)
};

struct CtlCommand
{
    const char *name;
    const char *arguments; // "DID", "" ...
    const char *summary;
};

// Every subcommand, in the order help lists them (completion is generated from it too).
const std::vector<CtlCommand> &ctlCommands();
// Every ctl flag (without the leading dashes).
QStringList ctlFlags();

// Runs `leasehold ctl ARGS...`; `arguments` starts with the program name.
int runCtl(const QStringList &arguments);
