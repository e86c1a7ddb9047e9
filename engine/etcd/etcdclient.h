#pragma once

#include <QSslConfiguration>
#include <QUrl>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace leasehold::etcd {

class HttpConnection;

// A key as etcd keeps it.
struct KeyValue
{
    std::string key;
    std::string value;
    std::int64_t createRevision = 0;
    std::int64_t modRevision = 0;
    std::int64_t version = 0;
    std::int64_t lease = 0;
};

// One condition of a transaction: the key's revision, version, value or lease compared.
struct Compare
{
    enum class Target { Create, Mod, Version, Value, Lease };
    enum class Result { Equal, Greater, Less, NotEqual };
    std::string key;
    Target target = Target::Create;
    Result result = Result::Equal;
    std::int64_t number = 0; // for Create, Mod, Version, Lease
    std::string value;       // for Value
};

// One operation of a transaction. A range or delete covers [key, rangeEnd) when rangeEnd is
// set (prefixEnd() gives a prefix's), else the key alone.
struct Op
{
    enum class Kind { Put, Range, Delete };
    Kind kind = Kind::Put;
    std::string key;
    std::string value;      // Put
    std::int64_t lease = 0; // Put: the key goes with this lease
    std::string rangeEnd;   // Range, Delete
    std::int64_t limit = 0; // Range: 0 is all

    static Op put(std::string key, std::string value, std::int64_t lease = 0);
    static Op range(std::string key, std::string rangeEnd = {}, std::int64_t limit = 0);
    static Op erase(std::string key, std::string rangeEnd = {});
};

struct TxnResult
{
    bool succeeded = false;
    std::int64_t revision = 0;                 // the store's revision after the transaction
    std::vector<std::vector<KeyValue>> ranges; // per Range op of the branch taken, in order
};

// What one member says of itself and its cluster.
struct MemberStatus
{
    std::uint64_t memberId = 0;
    std::uint64_t leaderId = 0; // 0: it knows of no leader
    std::int64_t raftTerm = 0;
    std::string version;
};

// How a call failed.
//   Unreachable  no member took the request: nothing was applied
//   Unknown      a member took it and did not answer in time (or answered "timed out" or "no
//                leader"): it may or may not have been applied
//   Refused      etcd answered no (a lease not found, a request too large): nothing applied
struct Error
{
    enum class Kind { None, Unreachable, Unknown, Refused };
    Kind kind = Kind::None;
    std::string message;
};

// etcd's v3 API through its JSON gateway (/v3/kv/..., /v3/lease/...), blocking, from one
// thread. Requests go to the member that answered last; when none is connected, the members
// are tried in turn until one takes the connection, within the call's bound. A request that
// reached a member is never sent again by the client (it may have been applied): the caller
// decides, usually by reading.
class Client
{
public:
    // TLS to members whose URL is https://: the CA that signed their certificates (empty: the
    // system's), and this client's certificate and key when they ask for one
    // (--client-cert-auth). Files in PEM.
    struct Tls
    {
        QString caFile;
        QString certFile;
        QString keyFile;
    };
    struct Options
    {
        Options(std::vector<QUrl> endpointUrls = {}, int timeout = 2000, Tls tlsFiles = {})
            : endpoints(std::move(endpointUrls))
            , timeoutMs(timeout)
            , tls(std::move(tlsFiles))
        {}
        std::vector<QUrl> endpoints;
        int timeoutMs; // each call, whatever it takes (connects included)
        Tls tls;
    };
    // The TLS set-up `tls` describes, or nothing with `error` (a file missing or unreadable, a
    // certificate without its key). Every client checks this when made; a service checks it
    // before it starts.
    static std::optional<QSslConfiguration> tlsConfiguration(const Tls &tls, std::string *error);

    explicit Client(Options options);
    ~Client();
    Client(const Client &) = delete;
    Client &operator=(const Client &) = delete;

    std::optional<TxnResult> txn(const std::vector<Compare> &compare,
                                 const std::vector<Op> &success,
                                 const std::vector<Op> &failure = {});
    // The keys in [key, rangeEnd) (or `key` alone), in key order, at most `limit` of them (0:
    // all); *revision gets the store's revision.
    std::optional<std::vector<KeyValue>> range(const std::string &key,
                                               const std::string &rangeEnd = {},
                                               std::int64_t *revision = nullptr,
                                               std::int64_t limit = 0);
    // The revision the put made.
    std::optional<std::int64_t> put(const std::string &key, const std::string &value,
                                    std::int64_t lease = 0);
    // A new lease of `ttlSeconds`: its id.
    std::optional<std::int64_t> grantLease(std::int64_t ttlSeconds);
    // Renews `lease` once: the seconds it now has, 0 when it is gone (expired or revoked).
    std::optional<std::int64_t> keepAlive(std::int64_t lease);
    bool revokeLease(std::int64_t lease);
    // The status of endpoints[member], asked of that member alone.
    std::optional<MemberStatus> status(std::size_t member);

    // Why the last call failed (Kind::None after a success).
    const Error &lastError() const { return m_error; }
    // The member the last answer came from.
    QString endpoint() const;
    int timeoutMs() const { return m_options.timeoutMs; }

    // The end of the range of every key starting with `prefix`.
    static std::string prefixEnd(const std::string &prefix);

private:
    // Sends to the current member, or the next ones while none takes it; or to `only`.
    std::optional<std::string> call(const char *path, const std::string &body,
                                    std::optional<std::size_t> only = std::nullopt);

    Options m_options;
    std::vector<std::unique_ptr<HttpConnection>> m_members;
    std::size_t m_current = 0;
    Error m_error;
    std::string m_tlsProblem; // the TLS set-up could not be made: no call goes out
};

} // namespace leasehold::etcd
