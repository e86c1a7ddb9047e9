// The files an operator hands Leasehold, from outside bytes: the keys file
// (KeyStore::parseKeys) and the config file (applyConfig). The first byte chooses the reader
// ("c": config, anything else: keys); the rest is the file. Asserted:
//   - keys: every entry read has a key, a DID that keeps the DID rule and a role; a refusal
//     says why and never repeats a key the file holds (keys never reach logs);
//   - config: the file is applied whole or not at all; a refusal names what is wrong; an
//     accepted file holds a JSON object whose every key is a setting (typos are refused), and
//     the port it sets is the port it wrote (never wrapped into another).

#include "configfile.h"
#include "did.h"
#include "keystore.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

using namespace leasehold;

namespace {

[[noreturn]] void fail(const char *what, const QString &detail = {})
{
    std::fprintf(stderr, "invariant broken: %s: %s\n", what, qPrintable(detail));
    std::abort();
}

void checkKeys(const QByteArray &file)
{
    QString error;
    const auto entries = KeyStore::parseKeys(file, &error);
    if (!entries) {
        if (error.isEmpty())
            fail("a keys file refused without a reason");
        // No key the file holds may appear in the reason (short ones would match by chance).
        const auto doc = nlohmann::json::parse(file.begin(), file.end(), nullptr, false);
        if (doc.is_object() && doc.contains("keys") && doc["keys"].is_array()) {
            for (const auto &entry : doc["keys"]) {
                if (!entry.is_object() || !entry.contains("key") || !entry["key"].is_string())
                    continue;
                const std::string key = entry["key"].get<std::string>();
                if (key.size() >= 12 && error.toUtf8().contains(QByteArray::fromStdString(key)))
                    fail("a keys file's refusal repeats a key", error);
            }
        }
        return;
    }
    for (const KeyFileEntry &e : *entries) {
        if (e.key.isEmpty())
            fail("a key entry without a key");
        if (!didProblem(e.identity.did.toStdString()).empty())
            fail("a key entry whose DID breaks the DID rule", e.identity.did);
    }
}

void checkConfig(const QByteArray &file)
{
    AppOptions options;
    options.workspace = QStringLiteral("\x01unchanged");
    const AppOptions before = options;
    QString error;
    if (!applyConfig(file, options, &error)) {
        if (error.isEmpty())
            fail("a config file refused without a reason");
        if (options.workspace != before.workspace || options.port != before.port ||
            options.exclusive != before.exclusive)
            fail("a refused config file was half applied", error);
        return;
    }
    const auto doc = nlohmann::json::parse(file.begin(), file.end(), nullptr, false);
    if (doc.is_discarded())
        return; // Qt's JSON reader is more lenient than nlohmann's in places; nothing to compare
    if (!doc.is_object())
        fail("an accepted config file is not an object");
    if (doc.contains("port")) {
        const auto &port = doc["port"];
        if (!port.is_number() || port.get<double>() != double(options.port))
            fail("the port applied is not the one written",
                 QString::fromStdString(port.dump()) + " vs " + QString::number(options.port));
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    if (size == 0)
        return 0;
    const QByteArray file(reinterpret_cast<const char *>(data) + 1, qsizetype(size - 1));
    if (data[0] == 'c')
        checkConfig(file);
    else
        checkKeys(file);
    return 0;
}
