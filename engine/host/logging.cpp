#include "logging.h"

Q_LOGGING_CATEGORY(lcService, "leasehold.service", QtInfoMsg)
Q_LOGGING_CATEGORY(lcHttp, "leasehold.http", QtInfoMsg)
