// The flags every guard's command line shares, and where the instance is from them.

#include "guardflags.h"

#include <QCommandLineParser>
#include <QTextStream>

#include <cstdio>

namespace guardcli {

const std::vector<AppFlag> &connectionFlags()
{
    static const std::vector<AppFlag> all = {
        {"url", "URL", "The instance (default: $LEASEHOLD_URL, else http://127.0.0.1:7878).", ""},
        {"key", "KEY", "The agent's bearer key (default: $LEASEHOLD_KEY).", ""},
        {"agent", "DID",
         "Act as this agent on an instance run with --open (default: $LEASEHOLD_AGENT).", ""},
        {"config", "FILE", "The instance's config file (for its address).", ""},
        {"timeout", "SECONDS", "Give up on a request after this long (default 10).", ""},
        {"root", "DIR", "The workspace root every agent and the instance share.", ""},
        {"strict", nullptr,
         "Refuse what cannot be judged: when the instance cannot be asked (hook, git), or a "
         "change no lease of this agent covers (mcp).",
         ""},
    };
    return all;
}

bool parse(QCommandLineParser &parser, const QStringList &arguments, const QString &usage,
           const std::vector<AppFlag> &extra, int *exitCode)
{
    parser.setApplicationDescription(usage);
    parser.addHelpOption();
    addFlags(parser, connectionFlags());
    addFlags(parser, extra);
    if (!parser.parse(arguments)) {
        QTextStream(stderr) << "leasehold: " << parser.errorText() << "\n";
        *exitCode = 2;
        return false;
    }
    if (parser.isSet(QStringLiteral("help"))) {
        QTextStream(stdout) << parser.helpText();
        *exitCode = 0;
        return false;
    }
    return true;
}

std::optional<ServiceClient::Settings> serviceFrom(const QCommandLineParser &parser,
                                                   Connection::Sources sources, const char *via,
                                                   const char *who, int failCode, int *exitCode)
{
    QString error;
    const std::optional<Connection> to = Connection::resolve(parser, sources, &error);
    if (!to) {
        QTextStream(stderr) << who << ": " << error << "\n";
        *exitCode = failCode;
        return std::nullopt;
    }
    return ServiceClient::Settings{to->url, to->key, to->agent, via, to->timeoutMs};
}

} // namespace guardcli
