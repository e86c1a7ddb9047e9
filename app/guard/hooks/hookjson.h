#pragma once

#include <QByteArray>
#include <QString>

#include <nlohmann/json.hpp>

#include <initializer_list>

// Reading another program's JSON without trusting it: every dialect takes its fields through
// these, which answer "" / -1 / an empty object for a missing field or one of the wrong type,
// and never throw.
namespace hookjson {
// A field's text, or "" when it is missing or not a string.
QString text(const nlohmann::json &object, const char *field);
// The first of `fields` that holds text.
QString firstText(const nlohmann::json &object, std::initializer_list<const char *> fields);
// A field's value when it is an object, else an empty object.
const nlohmann::json &object(const nlohmann::json &value, const char *field);
// A field's whole number, or -1 when it is missing or not one.
qint64 number(const nlohmann::json &object, const char *field);
// A shell tool's command: a string, or an argument list whose script is its last element
// ("bash", "-lc", "...").
QString command(const nlohmann::json &value);
// The compact JSON of `value`, as a fingerprint of a call's input.
QString fingerprint(const nlohmann::json &value);
// `value` as one line of JSON for stdout.
QByteArray line(const nlohmann::json &value);
} // namespace hookjson
