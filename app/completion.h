#pragma once

#include <QString>

// A bash completion script for leasehold, generated from the option table (appFlags) and the
// ctl command and flag tables, so it never falls behind them.
QString bashCompletion();
