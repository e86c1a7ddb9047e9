#pragma once

#include <QByteArray>
#include <QString>
#include <QUrl>

#include <optional>

class QCommandLineParser;

// Where a running instance is and who to be there, for `ctl`, the guards and the hooks: from
// the flags (--url, --key, --agent, --config, --data-dir, --timeout), then the environment
// (LEASEHOLD_URL, LEASEHOLD_KEY, LEASEHOLD_AGENT), then the config file, then the defaults
// (http://127.0.0.1:7878; with `adminFallback`, the data directory's admin key).
struct Connection
{
    QUrl url;
    QByteArray key;
    QString agent; // the DID to act as without a key (an --open instance)
    int timeoutMs = 10'000;

    struct Sources
    {
        bool adminFallback = false; // no key given: the data directory's admin key (ctl)
        bool agentFlag = true;      // --agent / LEASEHOLD_AGENT name the agent (not for ctl,
                                    // whose --agent filters the ledger)
    };
    // Reads what `parser` has of the flags above (the ones it does not define are skipped).
    // On a bad value sets `error` (a sentence naming the flag).
    static std::optional<Connection> resolve(const QCommandLineParser &parser, Sources sources,
                                             QString *error);
};
