// The baseline for the HTTP benchmark: bare QtHttpServer routes that do the JSON work of a
// lease cycle and nothing else. POST .../lease parses the body, remembers the lease in a hash
// map and answers a grant of the shape Leasehold's has (lease plus leases[]); POST .../release
// parses the body, forgets the lease named by leaseId and answers the shape Leasehold's
// release has (released[] and trust); .../renew answers the grant shape. No engine, no auth,
// no store, no guards.

#include <QCoreApplication>
#include <QHttpServer>
#include <QHttpServerRequest>
#include <QHttpServerResponse>
#include <QTextStream>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <string>
#include <unordered_map>

namespace {

std::unordered_map<std::string, nlohmann::json> leases;
unsigned long long nextToken = 1;

QHttpServerResponse json(const nlohmann::json &out)
{
    return QHttpServerResponse("application/json", QByteArray::fromStdString(out.dump()));
}

nlohmann::json parsed(const QHttpServerRequest &request)
{
    const QByteArray body = request.body();
    return nlohmann::json::parse(body.begin(), body.end(), nullptr, false);
}

} // namespace

int main(int argc, char *argv[])
{
    QCoreApplication app(argc, argv);
    QHttpServer server;
    auto grant = [](const QHttpServerRequest &request) {
        const nlohmann::json in = parsed(request);
        char id[40];
        std::snprintf(id, sizeof id, "ls_%032llx", nextToken);
        const nlohmann::json lease = {{"leaseId", id},
                                      {"resource", in.value("resource", "")},
                                      {"holder", in.value("actorDid", "")},
                                      {"mode", "write"},
                                      {"token", nextToken++},
                                      {"grantedAt", 1'800'000'000'000},
                                      {"expiresAt", 1'800'000'005'000},
                                      {"ttlMs", in.value("ttlMs", 30000)}};
        leases[id] = lease;
        return json({{"ok", true}, {"lease", lease}, {"leases", nlohmann::json::array({lease})}});
    };
    server.route("/api/v1/acp/coordination/lease", QHttpServerRequest::Method::Post, grant);
    server.route("/api/v1/acp/coordination/renew", QHttpServerRequest::Method::Post, grant);
    server.route("/api/v1/acp/coordination/release", QHttpServerRequest::Method::Post,
                 [](const QHttpServerRequest &request) {
                     const nlohmann::json in = parsed(request);
                     nlohmann::json released = nlohmann::json::array();
                     if (auto it = leases.find(in.value("leaseId", "")); it != leases.end()) {
                         released.push_back(std::move(it->second));
                         leases.erase(it);
                     }
                     return json({{"ok", true}, {"released", released}, {"trust", 0.5}});
                 });
    const quint16 port = server.listen(QHostAddress::LocalHost, 0);
    QTextStream(stdout) << "listening http://127.0.0.1:" << port << Qt::endl;
    return QCoreApplication::exec();
}
