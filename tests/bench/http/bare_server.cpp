// The baseline for the HTTP benchmark: a bare QtHttpServer POST route that parses the same
// JSON body and serialises a reply of the same size, with no engine, no auth, no guards.

#include <QCoreApplication>
#include <QHttpServer>
#include <QHttpServerRequest>
#include <QHttpServerResponse>
#include <QTextStream>

#include <nlohmann/json.hpp>

int main(int argc, char *argv[])
{
    QCoreApplication app(argc, argv);
    QHttpServer server;
    server.route(
        "/api/v1/acp/coordination/<arg>", QHttpServerRequest::Method::Post,
        [](const QString &, const QHttpServerRequest &request) {
            const QByteArray body = request.body();
            nlohmann::json in = nlohmann::json::parse(body.begin(), body.end(), nullptr, false);
            const nlohmann::json lease = {{"leaseId", "ls_0123456789abcdef0123456789abcdef"},
                                          {"resource", in.value("resource", "")},
                                          {"holder", in.value("actorDid", "")},
                                          {"mode", "write"},
                                          {"token", 1},
                                          {"grantedAt", 1'800'000'000'000},
                                          {"expiresAt", 1'800'000'005'000},
                                          {"ttlMs", 5000}};
            // The same shape Leasehold answers a grant with: lease plus leases[].
            const nlohmann::json out = {
                {"ok", true}, {"lease", lease}, {"leases", nlohmann::json::array({lease})}};
            return QHttpServerResponse("application/json", QByteArray::fromStdString(out.dump()));
        });
    const quint16 port = server.listen(QHostAddress::LocalHost, 0);
    QTextStream(stdout) << "listening http://127.0.0.1:" << port << Qt::endl;
    return QCoreApplication::exec();
}
