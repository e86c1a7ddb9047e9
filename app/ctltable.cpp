// Every ctl subcommand with its arguments and summary: help, the unknown-command check and the
// shell completion read this one table.

#include "ctl.h"

const std::vector<CtlCommand> &ctlCommands()
{
    static const std::vector<CtlCommand> all = {
        {"status", "", "Version, counts, and whether admissions are open"},
        {"holders", "", "Every lease: resource, holder, token, since when, expires in (--covers)"},
        {"wait", "", "Parked waits and recent refusals, with who they wait for; deadlock pairs"},
        {"release-holder", "DID", "Release everything DID holds"},
        {"release-lease", "LEASE", "Release one lease, whoever holds it (an overdue request's)"},
        {"release-all", "--yes", "Release every lease of every agent"},
        {"suspend", "DID", "Refuse DID until unsuspended"},
        {"unsuspend", "DID", "Let DID acquire again"},
        {"pause", "", "Refuse new requests (held leases stay)"},
        {"doctor", "",
         "What is wrong now, each finding with the command that fixes it (exit 1 if any)"},
        {"sweep", "--not-live-for DURATION [--dry-run]",
         "Release the leases of holders that are gone (live nowhere, not seen for DURATION)"},
        {"resume", "", "Admit requests again"},
        {"webhooks",
         "add URL --secret S [--events LIST] [--format json|slack] | list | remove "
         "ID | test ID",
         "Signed webhooks: add one, list them with their last deliveries, remove, send a test"},
        {"ledger", "", "Ledger events (--since, --limit, --agent, --resource, --kind, --follow)"},
        {"watch", "", "The leases (--prefix), then every change as it happens, until interrupted"},
        {"keys", "add DID", "Mint a key for DID (shown once; the instance keeps a digest)"},
        {"install-hooks", "claude-code|codex|gemini|copilot|qwen|opencode",
         "Add Leasehold's hooks to that agent's configuration (--project DIR or --user; "
         "--wait SECONDS), keeping its own"},
    };
    return all;
}
