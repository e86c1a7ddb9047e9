#pragma once

#include "connection.h"
#include "options.h"
#include "serviceclient.h"

#include <QStringList>

#include <optional>
#include <vector>

class QCommandLineParser;

namespace guardcli {
// The flags every guard shares: where the instance is, who to be there, the root, --strict.
const std::vector<AppFlag> &connectionFlags();
// Parses `arguments` (starting with the program name) with those flags and `extra`; on --help
// or a bad flag prints and returns false with the exit code in `exitCode`.
bool parse(QCommandLineParser &parser, const QStringList &arguments, const QString &usage,
           const std::vector<AppFlag> &extra, int *exitCode);
// Where the instance is and who to be there, as `via` (Connection::resolve); on a bad flag
// prints why as `who` and sets `exitCode` to `failCode`.
std::optional<ServiceClient::Settings> serviceFrom(const QCommandLineParser &parser,
                                                   Connection::Sources sources, const char *via,
                                                   const char *who, int failCode, int *exitCode);
} // namespace guardcli
