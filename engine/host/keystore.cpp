#include "keystore.h"

#include "did.h"

#include <QCryptographicHash>
#include <QFile>
#include <QRandomGenerator>

#include <nlohmann/json.hpp>

namespace leasehold {

namespace {

QByteArray digestOf(const QByteArray &key)
{
    return QCryptographicHash::hash(key, QCryptographicHash::Sha256);
}

bool constantTimeEqual(const QByteArray &a, const QByteArray &b)
{
    if (a.size() != b.size())
        return false;
    unsigned char diff = 0;
    for (qsizetype i = 0; i < a.size(); ++i)
        diff |= static_cast<unsigned char>(a[i] ^ b[i]);
    return diff == 0;
}

} // namespace

std::optional<std::vector<KeyFileEntry>> KeyStore::parseKeys(const QByteArray &json, QString *error)
{
    const nlohmann::json doc = nlohmann::json::parse(json.begin(), json.end(), nullptr, false);
    if (doc.is_discarded() || !doc.is_object() || !doc.contains("keys") ||
        !doc["keys"].is_array()) {
        *error = QStringLiteral("expected an object with a \"keys\" array");
        return std::nullopt;
    }
    std::vector<KeyFileEntry> out;
    int index = 0;
    for (const auto &entry : doc["keys"]) {
        const QString where = QStringLiteral("keys[%1]").arg(index++);
        if (!entry.is_object() || !entry.contains("key") || !entry["key"].is_string() ||
            !entry.contains("did") || !entry["did"].is_string() ||
            (entry.contains("role") && !entry["role"].is_string())) {
            *error = where + QStringLiteral(" needs string fields \"key\" and \"did\"");
            return std::nullopt;
        }
        const std::string key = entry["key"];
        const std::string did = entry["did"];
        const std::string role = entry.value("role", std::string("agent"));
        if (key.size() < 16) {
            *error = where + QStringLiteral(": key is shorter than 16 characters");
            return std::nullopt;
        }
        if (const std::string problem = didProblem(did); !problem.empty()) {
            *error = where + QStringLiteral(": did ") + QString::fromStdString(problem);
            return std::nullopt;
        }
        if (role != "agent" && role != "admin") {
            *error = where + QStringLiteral(": role must be \"agent\" or \"admin\"");
            return std::nullopt;
        }
        out.push_back({QByteArray::fromStdString(key),
                       {QString::fromStdString(did), role == "admin" ? Role::Admin : Role::Agent}});
    }
    return out;
}

std::optional<std::vector<KeyFileEntry>> KeyStore::readKeysFile(const QString &path, QString *error)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        *error = QStringLiteral("cannot read %1: %2").arg(path, file.errorString());
        return std::nullopt;
    }
    auto entries = parseKeys(file.readAll(), error);
    if (!entries)
        *error = path + QStringLiteral(": ") + *error;
    return entries;
}

bool KeyStore::createKeysFile(const QString &path, const QByteArray &key, const QString &did,
                              QString *error)
{
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::NewOnly)) {
        *error = QStringLiteral("cannot write %1: %2").arg(path, file.errorString());
        return false;
    }
    file.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner);
    const nlohmann::json doc = {
        {"keys", {{{"key", key.toStdString()}, {"did", did.toStdString()}, {"role", "admin"}}}}};
    file.write(QByteArray::fromStdString(doc.dump(2)) + '\n');
    return file.flush();
}

std::optional<KeyStore>
KeyStore::fromEntries(const std::optional<std::vector<KeyFileEntry>> &entries)
{
    if (!entries)
        return std::nullopt;
    KeyStore store;
    for (const KeyFileEntry &e : *entries)
        store.add(e.key, e.identity);
    return store;
}

std::optional<KeyStore> KeyStore::fromJson(const QByteArray &json, QString *error)
{
    return fromEntries(parseKeys(json, error));
}

std::optional<KeyStore> KeyStore::fromFile(const QString &path, QString *error)
{
    return fromEntries(readKeysFile(path, error));
}

void KeyStore::add(const QByteArray &key, const Identity &identity)
{
    m_entries.push_back({digestOf(key), identity});
}

void KeyStore::addDigest(const QByteArray &digest, const Identity &identity)
{
    m_entries.push_back({digest, identity});
}

QByteArray KeyStore::digest(const QByteArray &key)
{
    return digestOf(key);
}

std::map<std::string, int> KeyStore::keysByAgent() const
{
    std::map<std::string, int> counts;
    for (const Entry &e : m_entries)
        ++counts[e.identity.did.toStdString()];
    return counts;
}

std::optional<Identity> KeyStore::authenticate(const QByteArray &key) const
{
    const QByteArray digest = digestOf(key);
    std::optional<Identity> found;
    for (const Entry &e : m_entries) { // no early exit: time does not depend on the match
        if (constantTimeEqual(e.digest, digest))
            found = e.identity;
    }
    return found;
}

QByteArray KeyStore::mintKey()
{
    QByteArray raw(32, Qt::Uninitialized);
    QRandomGenerator::system()->generate(reinterpret_cast<quint32 *>(raw.data()),
                                         reinterpret_cast<quint32 *>(raw.data() + raw.size()));
    return "lh_" + raw.toBase64(QByteArray::Base64UrlEncoding | QByteArray::OmitTrailingEquals);
}

} // namespace leasehold
