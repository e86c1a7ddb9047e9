#pragma once

#include <QLoggingCategory>

// Log categories of the service layer; enable with QT_LOGGING_RULES="leasehold.*=true".
// Keys, bodies and agent secrets are never logged.
Q_DECLARE_LOGGING_CATEGORY(lcService)
Q_DECLARE_LOGGING_CATEGORY(lcHttp)
