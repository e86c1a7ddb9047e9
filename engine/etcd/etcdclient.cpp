#include "etcdclient.h"

#include "etcdhttp.h"

#include <QFile>
#include <QSslKey>

#include <QByteArray>
#include <QDeadlineTimer>

#include <nlohmann/json.hpp>

namespace leasehold::etcd {

using nlohmann::json;

namespace {

std::string b64(const std::string &bytes)
{
    return QByteArray::fromRawData(bytes.data(), qsizetype(bytes.size())).toBase64().toStdString();
}

std::string unb64(const json &value)
{
    if (!value.is_string())
        return {};
    return QByteArray::fromBase64(QByteArray::fromStdString(value.get<std::string>()))
        .toStdString();
}

// The gateway writes 64-bit numbers as strings and leaves out zeros and false.
std::int64_t number(const json &object, const char *name)
{
    const auto it = object.find(name);
    if (it == object.end())
        return 0;
    if (it->is_number_integer())
        return it->get<std::int64_t>();
    if (it->is_string())
        return QByteArray::fromStdString(it->get<std::string>()).toLongLong();
    return 0;
}

KeyValue keyValueFrom(const json &kv)
{
    KeyValue out;
    out.key = unb64(kv.value("key", json()));
    out.value = unb64(kv.value("value", json()));
    out.createRevision = number(kv, "create_revision");
    out.modRevision = number(kv, "mod_revision");
    out.version = number(kv, "version");
    out.lease = number(kv, "lease");
    return out;
}

std::vector<KeyValue> keyValuesFrom(const json &response)
{
    std::vector<KeyValue> out;
    if (const auto it = response.find("kvs"); it != response.end() && it->is_array()) {
        for (const json &kv : *it)
            out.push_back(keyValueFrom(kv));
    }
    return out;
}

json opJson(const Op &op)
{
    json body = {{"key", b64(op.key)}};
    switch (op.kind) {
    case Op::Kind::Put:
        body["value"] = b64(op.value);
        if (op.lease)
            body["lease"] = std::to_string(op.lease);
        return {{"request_put", body}};
    case Op::Kind::Range:
        if (!op.rangeEnd.empty())
            body["range_end"] = b64(op.rangeEnd);
        if (op.limit)
            body["limit"] = std::to_string(op.limit);
        return {{"request_range", body}};
    case Op::Kind::Delete:
        if (!op.rangeEnd.empty())
            body["range_end"] = b64(op.rangeEnd);
        return {{"request_delete_range", body}};
    }
    return {};
}

json compareJson(const Compare &c)
{
    static const char *targets[] = {"CREATE", "MOD", "VERSION", "VALUE", "LEASE"};
    static const char *results[] = {"EQUAL", "GREATER", "LESS", "NOT_EQUAL"};
    json body = {{"key", b64(c.key)},
                 {"target", targets[int(c.target)]},
                 {"result", results[int(c.result)]}};
    switch (c.target) {
    case Compare::Target::Create:
        body["create_revision"] = std::to_string(c.number);
        break;
    case Compare::Target::Mod:
        body["mod_revision"] = std::to_string(c.number);
        break;
    case Compare::Target::Version:
        body["version"] = std::to_string(c.number);
        break;
    case Compare::Target::Value:
        body["value"] = b64(c.value);
        break;
    case Compare::Target::Lease:
        body["lease"] = std::to_string(c.number);
        break;
    }
    return body;
}

json opsJson(const std::vector<Op> &ops)
{
    json out = json::array();
    for (const Op &op : ops)
        out.push_back(opJson(op));
    return out;
}

std::uint64_t id(const json &object, const char *name)
{
    const auto it = object.find(name);
    return it != object.end() && it->is_string()
               ? QByteArray::fromStdString(it->get<std::string>()).toULongLong()
               : 0;
}

} // namespace

Op Op::put(std::string key, std::string value, std::int64_t lease)
{
    Op op;
    op.kind = Kind::Put;
    op.key = std::move(key);
    op.value = std::move(value);
    op.lease = lease;
    return op;
}

Op Op::range(std::string key, std::string rangeEnd, std::int64_t limit)
{
    Op op;
    op.kind = Kind::Range;
    op.key = std::move(key);
    op.rangeEnd = std::move(rangeEnd);
    op.limit = limit;
    return op;
}

Op Op::erase(std::string key, std::string rangeEnd)
{
    Op op;
    op.kind = Kind::Delete;
    op.key = std::move(key);
    op.rangeEnd = std::move(rangeEnd);
    return op;
}

Client::Client(Options options)
    : m_options(std::move(options))
{
    std::shared_ptr<const QSslConfiguration> tls;
    for (const QUrl &url : m_options.endpoints) {
        if (url.scheme() == QLatin1String("https") && !tls) {
            std::string problem;
            std::optional<QSslConfiguration> made = tlsConfiguration(m_options.tls, &problem);
            if (!made) { // every call to that member then fails, saying why
                m_tlsProblem = problem;
                made = QSslConfiguration::defaultConfiguration();
            }
            tls = std::make_shared<const QSslConfiguration>(std::move(*made));
        }
        m_members.push_back(std::make_unique<HttpConnection>(
            url.host(), quint16(url.port(2379)),
            url.scheme() == QLatin1String("https") ? tls : nullptr));
    }
}

std::optional<QSslConfiguration> Client::tlsConfiguration(const Tls &tls, std::string *error)
{
    auto read = [error](const QString &path, const char *what) -> std::optional<QByteArray> {
        QFile file(path);
        if (!file.open(QIODevice::ReadOnly)) {
            *error = std::string("the etcd ") + what + " " + path.toStdString() + ": " +
                     file.errorString().toStdString();
            return std::nullopt;
        }
        return file.readAll();
    };
    QSslConfiguration c = QSslConfiguration::defaultConfiguration();
    c.setPeerVerifyMode(QSslSocket::VerifyPeer);
    if (!tls.caFile.isEmpty()) {
        const std::optional<QByteArray> pem = read(tls.caFile, "CA file");
        if (!pem)
            return std::nullopt;
        const QList<QSslCertificate> cas = QSslCertificate::fromData(*pem, QSsl::Pem);
        if (cas.isEmpty()) {
            *error = "the etcd CA file " + tls.caFile.toStdString() + " holds no PEM certificate";
            return std::nullopt;
        }
        c.setCaCertificates(cas);
    }
    if (tls.certFile.isEmpty() != tls.keyFile.isEmpty()) {
        *error = "an etcd client certificate needs its key, and a key its certificate";
        return std::nullopt;
    }
    if (!tls.certFile.isEmpty()) {
        const std::optional<QByteArray> cert = read(tls.certFile, "certificate");
        const std::optional<QByteArray> key = cert ? read(tls.keyFile, "key") : std::nullopt;
        if (!key)
            return std::nullopt;
        const QList<QSslCertificate> mine = QSslCertificate::fromData(*cert, QSsl::Pem);
        QSslKey privateKey(*key, QSsl::Ec, QSsl::Pem);
        if (privateKey.isNull())
            privateKey = QSslKey(*key, QSsl::Rsa, QSsl::Pem);
        if (mine.isEmpty() || privateKey.isNull()) {
            *error = "the etcd client certificate " + tls.certFile.toStdString() + " or key " +
                     tls.keyFile.toStdString() + " is not PEM this build can read";
            return std::nullopt;
        }
        c.setLocalCertificate(mine.first());
        c.setPrivateKey(privateKey);
    }
    return c;
}

Client::~Client() = default;

QString Client::endpoint() const
{
    return m_members.empty() ? QString() : m_members[m_current]->endpoint();
}

std::string Client::prefixEnd(const std::string &prefix)
{
    std::string end = prefix;
    while (!end.empty()) {
        if (static_cast<unsigned char>(end.back()) < 0xff) {
            end.back() = char(static_cast<unsigned char>(end.back()) + 1);
            return end;
        }
        end.pop_back();
    }
    return std::string(1, '\0'); // every key
}

std::optional<std::string> Client::call(const char *path, const std::string &body,
                                        std::optional<std::size_t> only)
{
    if (!m_tlsProblem.empty()) {
        m_error = {Error::Kind::Unreachable, m_tlsProblem};
        return std::nullopt;
    }
    m_error = {};
    if (m_members.empty()) {
        m_error = {Error::Kind::Unreachable, "no etcd endpoints"};
        return std::nullopt;
    }
    const QDeadlineTimer deadline(m_options.timeoutMs);
    std::string reasons;
    const std::size_t attempts = only ? 1 : m_members.size();
    for (std::size_t attempt = 0; attempt < attempts && !deadline.hasExpired(); ++attempt) {
        const std::size_t member =
            only ? *only % m_members.size() : (m_current + attempt) % m_members.size();
        HttpConnection::Failure failure{};
        std::string error;
        const std::optional<HttpConnection::Response> answer = m_members[member]->post(
            path, QByteArray::fromStdString(body),
            int(std::max<qint64>(1, deadline.remainingTime())), &failure, &error);
        if (!answer) {
            reasons += (reasons.empty() ? "" : "; ") + error;
            if (failure == HttpConnection::Failure::NotSent)
                continue; // nothing reached etcd: the next member may take it
            m_error = {Error::Kind::Unknown, error};
            m_current = (member + 1) % m_members.size(); // the next call asks another member
            return std::nullopt;
        }
        if (!only)
            m_current = member;
        if (answer->status == 200)
            return answer->body.toStdString();
        // A gRPC status through the gateway: {"error": ..., "code": N}.
        const json reply = json::parse(answer->body.toStdString(), nullptr, false);
        const int code = reply.is_object() ? int(number(reply, "code")) : 0;
        std::string message = reply.is_object() ? reply.value("message", std::string()) : "";
        if (message.empty())
            message = "HTTP " + std::to_string(answer->status);
        // UNAVAILABLE ("no leader") and DEADLINE_EXCEEDED ("request timed out"): the proposal
        // may still be committed.
        const bool unknown = code == 14 || code == 4;
        m_error = {unknown ? Error::Kind::Unknown : Error::Kind::Refused,
                   m_members[member]->endpoint().toStdString() + ": " + message};
        if (unknown) // a member cut off from its leader: another may reach it
            m_current = (member + 1) % m_members.size();
        return std::nullopt;
    }
    m_error = {Error::Kind::Unreachable,
               reasons.empty() ? std::string("no answer in time") : reasons};
    return std::nullopt;
}

std::optional<TxnResult> Client::txn(const std::vector<Compare> &compare,
                                     const std::vector<Op> &success, const std::vector<Op> &failure)
{
    json compares = json::array();
    for (const Compare &c : compare)
        compares.push_back(compareJson(c));
    const json body = {
        {"compare", compares}, {"success", opsJson(success)}, {"failure", opsJson(failure)}};
    const std::optional<std::string> answer = call("/v3/kv/txn", body.dump());
    if (!answer)
        return std::nullopt;
    const json reply = json::parse(*answer, nullptr, false);
    if (!reply.is_object()) {
        m_error = {Error::Kind::Unknown, "an answer that is not JSON"};
        return std::nullopt;
    }
    TxnResult out;
    out.succeeded = reply.value("succeeded", false);
    out.revision = number(reply.value("header", json::object()), "revision");
    if (const auto it = reply.find("responses"); it != reply.end() && it->is_array()) {
        for (const json &r : *it) {
            if (const auto range = r.find("response_range"); range != r.end())
                out.ranges.push_back(keyValuesFrom(*range));
        }
    }
    return out;
}

std::optional<std::vector<KeyValue>> Client::range(const std::string &key,
                                                   const std::string &rangeEnd,
                                                   std::int64_t *revision, std::int64_t limit)
{
    json body = opJson(Op::range(key, rangeEnd, limit))["request_range"];
    const std::optional<std::string> answer = call("/v3/kv/range", body.dump());
    if (!answer)
        return std::nullopt;
    const json reply = json::parse(*answer, nullptr, false);
    if (!reply.is_object()) {
        m_error = {Error::Kind::Unknown, "an answer that is not JSON"};
        return std::nullopt;
    }
    if (revision)
        *revision = number(reply.value("header", json::object()), "revision");
    return keyValuesFrom(reply);
}

std::optional<std::int64_t> Client::put(const std::string &key, const std::string &value,
                                        std::int64_t lease)
{
    const std::optional<TxnResult> done = txn({}, {Op::put(key, value, lease)});
    if (!done)
        return std::nullopt;
    return done->revision;
}

std::optional<std::int64_t> Client::grantLease(std::int64_t ttlSeconds)
{
    const std::optional<std::string> answer =
        call("/v3/lease/grant", json{{"TTL", std::to_string(ttlSeconds)}}.dump());
    if (!answer)
        return std::nullopt;
    const json reply = json::parse(*answer, nullptr, false);
    const std::int64_t id = reply.is_object() ? number(reply, "ID") : 0;
    if (id == 0) {
        m_error = {Error::Kind::Refused, reply.is_object()
                                             ? reply.value("error", std::string("no lease granted"))
                                             : "an answer that is not JSON"};
        return std::nullopt;
    }
    return id;
}

std::optional<std::int64_t> Client::keepAlive(std::int64_t lease)
{
    const std::optional<std::string> answer =
        call("/v3/lease/keepalive", json{{"ID", std::to_string(lease)}}.dump());
    if (!answer)
        return std::nullopt;
    // A stream of one answer: {"result": {"ID": ..., "TTL": ...}}; no TTL when it is gone.
    const json reply = json::parse(*answer, nullptr, false);
    if (!reply.is_object() || !reply.contains("result")) {
        m_error = {Error::Kind::Unknown, "an answer that is not a keep-alive result"};
        return std::nullopt;
    }
    return number(reply["result"], "TTL");
}

bool Client::revokeLease(std::int64_t lease)
{
    return call("/v3/lease/revoke", json{{"ID", std::to_string(lease)}}.dump()).has_value();
}

std::optional<MemberStatus> Client::status(std::size_t member)
{
    const std::optional<std::string> answer = call("/v3/maintenance/status", "{}", member);
    if (!answer)
        return std::nullopt;
    const json reply = json::parse(*answer, nullptr, false);
    if (!reply.is_object()) {
        m_error = {Error::Kind::Unknown, "an answer that is not JSON"};
        return std::nullopt;
    }
    MemberStatus out;
    out.memberId = id(reply.value("header", json::object()), "member_id");
    out.leaderId = id(reply, "leader");
    out.raftTerm = number(reply, "raftTerm");
    out.version = reply.value("version", std::string());
    return out;
}

} // namespace leasehold::etcd
