#pragma once

#include <QByteArray>
#include <QString>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace leasehold {

enum class Role { Agent, Admin };

// Who a bearer key speaks for.
struct Identity
{
    QString did;
    Role role = Role::Agent;
};

// One entry of a keys file, key and all.
struct KeyFileEntry
{
    QByteArray key;
    Identity identity;
};

// Bearer keys and the agents they name. Keys are kept only as SHA-256 digests and compared in
// constant time; a key never appears in a log or an error message.
//
// Thread: read on the engine thread; keys minted while running are added there too.
class KeyStore
{
public:
    // The one reader of a keys file: {"keys":[{"key":"…","did":"…","role":"agent"|"admin"}]},
    // every did keeping the DID rule (did.h). On failure returns nothing and sets `error`
    // (naming the entry, never the key).
    static std::optional<std::vector<KeyFileEntry>> parseKeys(const QByteArray &json,
                                                              QString *error);
    static std::optional<std::vector<KeyFileEntry>> readKeysFile(const QString &path,
                                                                 QString *error);
    // Creates `path` (mode 0600, never overwriting) holding one admin key for `did`.
    static bool createKeysFile(const QString &path, const QByteArray &key, const QString &did,
                               QString *error);

    static std::optional<KeyStore> fromJson(const QByteArray &json, QString *error);
    static std::optional<KeyStore> fromFile(const QString &path, QString *error);

    void add(const QByteArray &key, const Identity &identity);
    // Adds a key known only by its digest (as the store keeps minted keys).
    void addDigest(const QByteArray &digest, const Identity &identity);
    std::optional<Identity> authenticate(const QByteArray &key) const;
    bool empty() const { return m_entries.empty(); }
    std::size_t size() const { return m_entries.size(); }

    // How many keys speak for each DID.
    std::map<std::string, int> keysByAgent() const;

    // A fresh random key (URL-safe, 256 bits).
    static QByteArray mintKey();
    // The SHA-256 digest a key is kept as.
    static QByteArray digest(const QByteArray &key);

private:
    static std::optional<KeyStore> fromEntries(const std::optional<std::vector<KeyFileEntry>> &e);

    struct Entry
    {
        QByteArray digest;
        Identity identity;
    };
    std::vector<Entry> m_entries;
};

} // namespace leasehold
