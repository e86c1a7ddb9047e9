// Engine benchmarks: acquire+release pairs against a growing table (plain names, plain names
// among pattern leases, patterns among plain leases), the deadlock check with a crowded queue,
// and the cost of waking a parked waiter.

#include "leaseengine.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>

using namespace leasehold;

namespace {

class CountingListener : public EngineListener
{
public:
    void onEvent(const LedgerEvent &e) override { last = e.seq; }
    std::uint64_t last = 0;
};

ResourceName parse(const std::string &text)
{
    static const ResourceParser parser;
    return std::get<ResourceName>(parser.parse(text));
}

AcquireRequest request(const std::string &actor, const std::string &resource,
                       std::int64_t waitMs = 0)
{
    AcquireRequest r;
    r.actor = actor;
    r.resources.push_back(parse(resource));
    r.ttlMs = 3'600'000;
    r.waitMs = waitMs;
    return r;
}

// Fills the table with `n` live leases held by n/4 agents on names four segments deep.
void populate(LeaseEngine &engine, int n)
{
    for (int i = 0; i < n; ++i) {
        const auto r =
            engine.acquire(request("did:agent:fill-" + std::to_string(i % (n / 4 + 1)),
                                   "fs:repo/" + std::to_string(i % 97) + "/dir" +
                                       std::to_string(i % 13) + "/file" + std::to_string(i)));
        if (!std::holds_alternative<Grant>(r))
            std::abort();
    }
}

// The timed loop every pair benchmark shares: `acquire` granted (abort otherwise: a refusal
// would measure something else), then released; reports pairs and the live lease count.
void runPairs(benchmark::State &state, LeaseEngine &engine, const AcquireRequest &acquire)
{
    const std::vector<ResourceName> release{acquire.resources[0]};
    for (auto _ : state) {
        auto granted = engine.acquire(acquire);
        if (!std::holds_alternative<Grant>(granted))
            std::abort();
        auto released = engine.release(acquire.actor, release);
        benchmark::DoNotOptimize(released);
    }
    state.SetItemsProcessed(state.iterations());
    state.counters["live"] = double(engine.leaseCount());
}

// state.range(1): 1 with a ledger listener attached (as the service runs), 0 without.
void BM_AcquireRelease(benchmark::State &state)
{
    ManualClock clock;
    LeaseEngine engine(clock);
    CountingListener listener;
    if (state.range(1))
        engine.setListener(&listener);
    populate(engine, int(state.range(0)));
    runPairs(state, engine, request("did:agent:bench", "fs:repo/42/dir7/hot.cpp"));
}
BENCHMARK(BM_AcquireRelease)->ArgsProduct({{100, 10'000, 100'000}, {0, 1}});

// Plain acquire+release pairs (as BM_AcquireRelease) with `n` live pattern leases spread over the
// same tree, none of them meeting the hot name: one in ten a `**` pattern (in the other top
// folders), the rest one folder deep (`repo/7/dir3/*.x123`, eight or so beside the hot file).
// Compare with BM_AcquireRelease/n/1: the target is at least half its rate.
void BM_PlainAmongPatterns(benchmark::State &state)
{
    ManualClock clock;
    LeaseEngine engine(clock);
    CountingListener listener;
    engine.setListener(&listener);
    const int n = int(state.range(0));
    for (int i = 0; i < n; ++i) {
        const int top = i % 97;
        const std::string dir =
            "fs:repo/" + std::to_string(top) + "/dir" + std::to_string(i % 13) + "/";
        const bool deep = i % 10 == 0 && top != 42;
        const auto r = engine.acquire(request("did:agent:pattern-" + std::to_string(i % 251),
                                              dir + (deep ? "**/*.y" : "*.x") + std::to_string(i)));
        if (!std::holds_alternative<Grant>(r))
            std::abort();
    }
    runPairs(state, engine, request("did:agent:bench", "fs:repo/42/dir7/hot.cpp"));
}
BENCHMARK(BM_PlainAmongPatterns)->Arg(10'000);

// Pattern acquire+release pairs among `n` live plain leases (populate): range(1) 0 asks
// `repo/42/dir7/*.ts` (about 80 plain names sit below its literal prefix, each tested exactly),
// 1 asks `repo/*/dir7/*.ts`, the worst case: a wildcard at the top, so all n plain names are
// below its literal prefix and each is tested. (`repo/42/**/*.ts` would not be granted: every
// plain name below repo/42 may be a folder holding a .ts.) Compare with BM_AcquireRelease/n/1.
void BM_PatternAmongPlain(benchmark::State &state)
{
    ManualClock clock;
    LeaseEngine engine(clock);
    CountingListener listener;
    engine.setListener(&listener);
    populate(engine, int(state.range(0)));
    runPairs(state, engine,
             request("did:agent:bench",
                     state.range(1) ? "fs:repo/*/dir7/*.ts" : "fs:repo/42/dir7/*.ts"));
}
BENCHMARK(BM_PatternAmongPlain)->ArgsProduct({{100'000}, {0, 1}});

// A contended request with 10 000 parked waiters and 10 000 live wants in the table: the
// deadlock search plus the want registration. 1 000 holders each hold one resource; ten agents
// are parked on each, and 10 000 more agents want them (refused earlier). Holders themselves
// wait for nothing, as in a healthy fleet. The askers hold a lease of their own, so the cycle
// search really runs (an agent that holds nothing cannot close a cycle and skips it). Reports
// p50/p99 of single requests.
void BM_DeadlockCheckCrowded(benchmark::State &state)
{
    ManualClock clock;
    EngineConfig config;
    config.minWantMs = 3'600'000; // wants stay live for the whole run
    LeaseEngine engine(clock, config);
    CountingListener listener;
    engine.setListener(&listener);
    const int crowd = int(state.range(0));
    const int holders = crowd / 10;
    auto resource = [](int i) { return "lock:q/" + std::to_string(i); };
    for (int i = 0; i < holders; ++i)
        engine.acquire(request("did:agent:h" + std::to_string(i), resource(i)));
    for (int i = 0; i < crowd; ++i) {
        engine.acquire(request("did:agent:w" + std::to_string(i), resource(i % holders), 90'000));
        engine.acquire(request("did:agent:x" + std::to_string(i), resource(i % holders)));
    }
    if (engine.parkedCount() != std::size_t(crowd))
        std::abort();
    const int askers = 1'000;
    for (int i = 0; i < askers; ++i)
        engine.acquire(
            request("did:agent:asker" + std::to_string(i), "lock:own/" + std::to_string(i)));
    std::vector<double> micros;
    micros.reserve(1 << 16);
    int n = 0;
    for (auto _ : state) {
        // An agent holding a lease asks for a crowded resource: the search walks the holder's
        // and the queue's edges, then the refusal registers a want.
        const int asker = n % askers; // each asker keeps wanting the same resource
        const AcquireRequest ask = request("did:agent:asker" + std::to_string(asker),
                                           resource((asker * 7919 + 1) % holders));
        const auto t0 = std::chrono::steady_clock::now();
        auto r = engine.acquire(ask);
        const auto t1 = std::chrono::steady_clock::now();
        benchmark::DoNotOptimize(r);
        micros.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
        ++n;
    }
    std::sort(micros.begin(), micros.end());
    state.counters["p50_us"] = micros[micros.size() / 2];
    state.counters["p99_us"] = micros[micros.size() * 99 / 100];
    state.counters["parked"] = double(engine.parkedCount());
    state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_DeadlockCheckCrowded)->Arg(10'000)->Iterations(20'000);

// The worst chain: the request that closes a cycle through `length` agents.
void BM_DeadlockCycleFound(benchmark::State &state)
{
    ManualClock clock;
    EngineConfig config;
    config.minWantMs = 3'600'000;
    LeaseEngine engine(clock, config);
    const int length = int(state.range(0));
    for (int i = 0; i < length; ++i)
        engine.acquire(request("a" + std::to_string(i), "lock:c/" + std::to_string(i)));
    for (int i = 0; i < length - 1; ++i)
        engine.acquire(request("a" + std::to_string(i), "lock:c/" + std::to_string(i + 1)));
    const AcquireRequest closing = request("a" + std::to_string(length - 1), "lock:c/0");
    for (auto _ : state) {
        auto r = engine.acquire(closing);
        if (std::get<Refusal>(r).reason != RefusalReason::Deadlock)
            std::abort();
        benchmark::DoNotOptimize(r);
    }
    state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_DeadlockCycleFound)->Arg(2)->Arg(50)->Arg(1'000);

// Release with `n` writers parked on the resource: the head is granted, the rest stay.
void BM_WakeOnRelease(benchmark::State &state)
{
    ManualClock clock;
    LeaseEngine engine(clock);
    const int queued = int(state.range(0));
    engine.acquire(request("did:agent:holder-0", "lock:hot"));
    for (int i = 1; i <= queued; ++i)
        engine.acquire(request("did:agent:holder-" + std::to_string(i), "lock:hot", 90'000));
    const std::vector<ResourceName> hot{parse("lock:hot")};
    int next = 0;
    for (auto _ : state) {
        // The current holder lets go; the head waiter is granted; it re-queues at the back.
        const std::string holder = "did:agent:holder-" + std::to_string(next);
        auto r = engine.release(holder, hot);
        benchmark::DoNotOptimize(r);
        state.PauseTiming();
        engine.acquire(request(holder, "lock:hot", 90'000));
        next = (next + 1) % (queued + 1);
        state.ResumeTiming();
    }
    state.SetItemsProcessed(state.iterations());
    state.counters["parked"] = double(engine.parkedCount());
}
BENCHMARK(BM_WakeOnRelease)->Arg(1)->Arg(50)->Arg(10'000);

} // namespace

BENCHMARK_MAIN();
