// etcd's transaction rate through the JSON gateway on this machine, against a three-member
// cluster on loopback: what cluster mode is measured against and what grouping buys.
//   lock per request  each acquire is etcd's lock recipe's write (a put if the key is absent,
//                     bound to a session lease) and each release a delete: one transaction
//                     each, from 1 and from 16 clients at once
//   grouped           the same acquire/release pairs, `group` of them per transaction
//   round trip        a call no member needs to agree on (status): the gateway's own cost
// A benchmark, not a test: bench_etcd [seconds per run = 5] [group = 64]

#include "etcdclient.h"
#include "etcdcluster.h"

#include <QCoreApplication>
#include <QElapsedTimer>

#include <atomic>
#include <cstdio>
#include <thread>

using namespace leasehold::etcd;

namespace {

struct Outcome
{
    double pairsPerSecond = 0;
    double transactionsPerSecond = 0;
    int failures = 0;
};

Outcome run(const EtcdCluster &cluster, int clients, int group, int seconds, const char *tag)
{
    std::atomic<long> pairs{0}, transactions{0};
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    QElapsedTimer clock;
    clock.start();
    for (int t = 0; t < clients; ++t) {
        threads.emplace_back([&, t] {
            Client c({cluster.endpointsFrom(t % cluster.size()), 5000});
            const std::optional<std::int64_t> session = c.grantLease(30);
            if (!session) {
                ++failures;
                return;
            }
            for (long n = 0; clock.elapsed() < seconds * 1000; ++n) {
                std::vector<Compare> absent;
                std::vector<Op> acquire, release;
                for (int g = 0; g < group; ++g) {
                    const std::string key = std::string("bench/") + tag + "/" + std::to_string(t) +
                                            "/" + std::to_string(g);
                    absent.push_back({key, Compare::Target::Create, Compare::Result::Equal, 0, {}});
                    acquire.push_back(Op::put(key, "holder", *session));
                    release.push_back(Op::erase(key));
                }
                const auto got = c.txn(absent, acquire);
                const auto gone = c.txn({}, release);
                if (!got || !got->succeeded || !gone) {
                    ++failures;
                    continue;
                }
                pairs += group;
                transactions += 2;
            }
            c.revokeLease(*session);
        });
    }
    for (std::thread &t : threads)
        t.join();
    const double took = double(clock.elapsed()) / 1000.0;
    return {double(pairs) / took, double(transactions) / took, failures.load()};
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    const int seconds = argc > 1 ? std::atoi(argv[1]) : 5;
    const int group = argc > 2 ? std::atoi(argv[2]) : 64;
    EtcdCluster cluster(3);
    std::string error;
    if (!cluster.start(&error)) {
        std::fprintf(stderr, "%s\n", error.c_str());
        return 1;
    }
    struct Row
    {
        const char *name;
        int clients;
        int group;
    };
    const Row rows[] = {{"lock per request, 1 client", 1, 1},
                        {"lock per request, 16 clients", 16, 1},
                        {"grouped, 1 client", 1, group},
                        {"grouped, 4 clients", 4, group}};
    std::printf("etcd %s, 3 members on loopback, %d s a run, groups of %d\n",
                qPrintable(EtcdCluster::binary()), seconds, group);
    {
        // The gateway's own cost: a call that needs no agreement among the members.
        Client c({cluster.endpoints(), 5000});
        QElapsedTimer clock;
        clock.start();
        long calls = 0;
        while (clock.elapsed() < seconds * 1000 && c.status(0))
            ++calls;
        std::printf("%-30s %9.0f calls/s (%.0f us each)\n", "gateway round trip (status)",
                    double(calls) * 1000.0 / double(clock.elapsed()),
                    double(clock.elapsed()) * 1000.0 / double(std::max(1L, calls)));
    }
    int tag = 0;
    for (const Row &row : rows) {
        const Outcome o =
            run(cluster, row.clients, row.group, seconds, std::to_string(tag++).c_str());
        std::printf("%-30s %9.0f acquire/release pairs/s %7.0f transactions/s  %d failed\n",
                    row.name, o.pairsPerSecond, o.transactionsPerSecond, o.failures);
    }
    return 0;
}
