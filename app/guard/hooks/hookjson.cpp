#include "hookjson.h"

using nlohmann::json;

namespace hookjson {

QString text(const json &object, const char *field)
{
    if (!object.is_object())
        return {};
    const auto it = object.find(field);
    if (it == object.end() || !it->is_string())
        return {};
    return QString::fromStdString(it->get<std::string>());
}

QString firstText(const json &object, std::initializer_list<const char *> fields)
{
    for (const char *field : fields) {
        QString value = text(object, field);
        if (!value.isEmpty())
            return value;
    }
    return {};
}

const json &object(const json &value, const char *field)
{
    static const json empty = json::object();
    if (!value.is_object())
        return empty;
    const auto it = value.find(field);
    return it != value.end() && it->is_object() ? *it : empty;
}

qint64 number(const json &object, const char *field)
{
    if (!object.is_object())
        return -1;
    const auto it = object.find(field);
    if (it == object.end())
        return -1;
    if (it->is_number_unsigned())
        return it->get<std::uint64_t>() > std::uint64_t(1) << 62 ? -1
                                                                 : qint64(it->get<std::uint64_t>());
    if (it->is_number_integer())
        return it->get<std::int64_t>() < 0 ? -1 : it->get<std::int64_t>();
    if (it->is_number_float()) {
        const double d = it->get<double>();
        return d >= 0 && d < 4.0e18 ? qint64(d) : -1;
    }
    return -1;
}

QString command(const json &value)
{
    if (value.is_string())
        return QString::fromStdString(value.get<std::string>());
    if (value.is_array() && !value.empty() && value.back().is_string())
        return QString::fromStdString(value.back().get<std::string>());
    return {};
}

QString fingerprint(const json &value)
{
    return QString::fromStdString(value.dump(-1, ' ', false, json::error_handler_t::replace));
}

QByteArray line(const json &value)
{
    return QByteArray::fromStdString(value.dump(-1, ' ', false, json::error_handler_t::replace)) +
           '\n';
}

} // namespace hookjson
