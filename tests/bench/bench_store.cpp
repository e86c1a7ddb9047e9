// Engine throughput through the engine host with the SQLite store attached vs detached, and
// the store's queue under a burst. Run: ./build/tests/bench/bench_store
//
// Each iteration is one acquire and one release by the same agent on one of `live` resources
// kept held by others (so the trie is populated), the way the REST routes drive the engine.
// With the store attached the engine also journals every change into the host's operation
// buffer, which goes to the writer thread whole (the engine never waits for it); counters
// report how far the writer lagged. Wall-clock figures move with the machine's load; for a
// steady figure count instructions instead: tests/bench/store_instructions.sh.

#include "enginehost.h"
#include "sqlitestore.h"

#include <QCoreApplication>
#include <QTemporaryDir>

#include <thread>

#include <pthread.h>
#include <sched.h>
#include <time.h>

#include <benchmark/benchmark.h>

using namespace leasehold;

namespace {

ResourceName name(const EngineHost &host, const std::string &text)
{
    return std::get<ResourceName>(host.parser().parse(text));
}

// range(0): store attached; range(1): paced - after every 256 pairs the clock stops until the
// writer has caught up, so the figure is the engine thread's own cost at a load the writer
// sustains (unpaced, the engine outruns the writer and the queue grows).
void BM_HostPairs(benchmark::State &state)
{
    const bool attached = state.range(0) != 0;
    const bool paced = state.range(1) != 0;
    // LEASEHOLD_BENCH_ENGINE_CPU=N keeps the engine thread on CPU N and the writer on the
    // others (it inherits the affinity the engine thread has when the store starts it), so
    // neither preempts the other; which CPU takes the disk's interrupts (/proc/interrupts)
    // then decides what the engine thread pays for the store.
    const QByteArray engineCpu = qgetenv("LEASEHOLD_BENCH_ENGINE_CPU");
    auto pin = [&engineCpu](bool onEngineCpu) {
        cpu_set_t set;
        CPU_ZERO(&set);
        for (int cpu = 0; cpu < CPU_SETSIZE && cpu < int(std::thread::hardware_concurrency());
             ++cpu) {
            if ((cpu == engineCpu.toInt()) == onEngineCpu)
                CPU_SET(cpu, &set);
        }
        pthread_setaffinity_np(pthread_self(), sizeof set, &set);
    };
    if (!engineCpu.isEmpty())
        pin(false);
    QTemporaryDir dir;
    SqliteStore store({dir.filePath(QStringLiteral("bench.db"))});
    EngineHost host(EngineConfig{});
    if (attached) {
        std::string error;
        const std::optional<StoredState> loaded = store.load(&error);
        host.restoreFrom(store, *loaded);
    }
    if (!engineCpu.isEmpty())
        pin(true);
    for (int i = 0; i < 1000; ++i)
        host.run([&](LeaseEngine &e) {
            return e.acquire({"did:agent:holder",
                              {name(host, "lock:held/" + std::to_string(i))},
                              Mode::Write,
                              3'600'000,
                              0});
        });
    const ResourceName mine = name(host, "lock:mine/x");
    std::uint64_t maxQueued = 0;
    std::int64_t n = 0;
    // The engine thread's own CPU time, outside the paused waits.
    auto threadNs = [] {
        timespec t;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
        return std::int64_t(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
    };
    std::int64_t cpuNs = 0;
    std::int64_t segment = threadNs();
    for (auto _ : state) {
        host.run([&](LeaseEngine &e) {
            return e.acquire({"did:agent:bench", {mine}, Mode::Write, 30'000, 0});
        });
        host.run([&](LeaseEngine &e) { return e.release("did:agent:bench", {mine}); });
        ++n;
        if (attached && paced && n % 256 == 0) {
            cpuNs += threadNs() - segment;
            state.PauseTiming();
            maxQueued = std::max(maxQueued, store.stats().queued);
            // Waits the way the HTTP front does, for the writer's report to reach this
            // thread's event loop; spinning, so the thread never sleeps and wakes up on a
            // cold CPU (polling the store's counters would contend for its queue's lock).
            bool durable = false;
            host.whenDurable([&durable](bool) { durable = true; });
            while (!durable)
                QCoreApplication::processEvents();
            state.ResumeTiming();
            segment = threadNs();
        } else if (attached && n % 4096 == 0) {
            maxQueued = std::max(maxQueued, store.stats().queued);
            QCoreApplication::processEvents();
        }
    }
    cpuNs += threadNs() - segment;
    state.SetItemsProcessed(state.iterations());
    state.counters["engine_thread_ns_per_pair"] =
        double(cpuNs) / double(std::max<std::int64_t>(n, 1));
    if (attached) {
        const StoreStats before = store.stats();
        store.close();
        const StoreStats after = store.stats();
        state.counters["max_queued_ops"] = double(maxQueued);
        state.counters["queued_at_end"] = double(before.queued);
        state.counters["batches"] = double(after.batches);
        state.counters["ops_per_batch"] =
            after.batches ? double(n * 6) / double(after.batches) : 0; // ~3 ops per decision
        state.counters["dropped_events"] = double(after.droppedEvents);
    }
}

// A burst far beyond the queue's event bound: events are dropped and counted, state is not.
void BM_StoreBurst(benchmark::State &state)
{
    QTemporaryDir dir;
    SqliteStore::Options options{dir.filePath(QStringLiteral("burst.db"))};
    options.maxQueuedEvents = 10'000;
    SqliteStore store(options);
    std::string error;
    store.load(&error);
    std::uint64_t seq = 0;
    for (auto _ : state) {
        StoreOps ops;
        for (int i = 0; i < 100'000; ++i) {
            LedgerEvent e;
            e.seq = ++seq;
            e.kind = EventKind::Granted;
            e.actorDid = "did:agent:burst";
            ops.appendEvent(e);
        }
        store.submit(ops);
    }
    store.close();
    const StoreStats s = store.stats();
    state.counters["dropped_events"] = double(s.droppedEvents);
    state.counters["written_batches"] = double(s.batches);
}
BENCHMARK(BM_StoreBurst)->Iterations(5)->Unit(benchmark::kMillisecond);

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    // LEASEHOLD_BENCH_PAIRS=N runs exactly N pairs per case (for instruction counts, see
    // store_instructions.sh); otherwise each case runs for two seconds.
    auto *pairs = benchmark::RegisterBenchmark("BM_HostPairs", BM_HostPairs)
                      ->Args({0, 0})
                      ->Args({1, 1})
                      ->Args({1, 0})
                      ->UseRealTime();
    if (const int n = qEnvironmentVariableIntValue("LEASEHOLD_BENCH_PAIRS"); n > 0)
        pairs->Iterations(n);
    else
        pairs->MinTime(2.0);
    benchmark::Initialize(&argc, argv);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
