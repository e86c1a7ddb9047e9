#pragma once

#include "options.h"

#include <QByteArray>
#include <QString>

// The config file (--config FILE): one JSON object of settings (docs/operating.md lists them),
// read strictly. A key it does not know, a value of the wrong type or one out of its range is
// an error that names the key and says what it must be: a typo never passes for a default and
// an out-of-range port never wraps into another one.

// Applies the settings `json` holds to `options`. On failure `options` is left as it was and
// `error` says why.
bool applyConfig(const QByteArray &json, AppOptions &options, QString *error);

// Reads the file at `path` and applies it (applyConfig); `error` names the file on failure.
bool readConfig(const QString &path, AppOptions &options, QString *error);
