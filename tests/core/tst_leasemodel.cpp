// Randomized model-based test: thousands of random operations against the real engine and the
// reference model in leasemodel.cpp, compared after every step. The seed is printed; set
// LEASEHOLD_SEED to replay a failure and LEASEHOLD_MODEL_OPS to run longer.

#include "enginetest.h"
#include "leasemodel.h"

#include <QTest>

#include <limits>
#include <random>

using namespace leasehold;
using namespace leasehold::test;

class TstLeaseModel : public QObject
{
    Q_OBJECT

private slots:
    void randomOperationsMatchTheModel();
};

namespace {

struct Driver
{
    explicit Driver(std::uint64_t seed)
        : rng(seed)
        , engine(clock, config(), fixedIds())
        , model({"src/y"})
    {
        engine.setListener(&listener);
    }

    static EngineConfig config()
    {
        EngineConfig c;
        c.exclusivePatterns = {"src/y"};
        // Clamping makes trust depend on the order of simultaneous effects (ties the engine may
        // break either way); tst_leaseengine covers the clamp itself.
        c.trustMin = -1e9;
        c.trustMax = 1e9;
        return c;
    }

    // Uniform in [0, n), by rejection from mt19937_64's raw output, whose sequence the standard
    // fixes: the same on every standard library, so a printed seed always replays
    // (std::uniform_int_distribution's algorithm is left to each library).
    std::size_t pick(std::size_t n)
    {
        constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
        const std::uint64_t limit = kMax - kMax % n;
        std::uint64_t x = rng();
        while (x >= limit)
            x = rng();
        return std::size_t(x % n);
    }
    bool chance(int percent) { return pick(100) < std::size_t(percent); }

    std::string agent() { return "did:agent:" + std::to_string(pick(6)); }
    ResourceName resource()
    {
        // Plain names and patterns (bruteoverlap.h decides their overlaps independently); the
        // whole workspace last, drawn rarely. `src/*/z` and `lock:*/1`: a literal after a
        // wildcard, which the trie looks up instead of reading every child; `src/*/*.ts`: a
        // fixed extension, which it reads from its index of children by extension.
        static const char *names[] = {
            "lock:a",      "lock:a/1",    "lock:a/2", "lock:b",      "lock:b/1",
            "fs:src",      "src/x",       "src/y",    "src/x/z",     "src/x/a.ts",
            "src/y/a.ts",  "src/x/c.cpp", "lock:*/1", "lock:a/*",    "lock:**/2",
            "lock:[ab]",   "src/*",       "src/**/z", "src/*/z",     "src/*/*.ts",
            "src/**/*.ts", "src/x/*.cpp", "fs:**/y",  "lock:?/[!1]", "fs:."};
        return name(names[pick(std::size(names) - (chance(97) ? 1 : 0))]);
    }
    std::vector<ResourceName> resources(std::size_t max)
    {
        std::vector<ResourceName> out;
        const std::size_t n = 1 + pick(max);
        for (std::size_t i = 0; i < n; ++i)
            out.push_back(resource());
        return out;
    }
    Mode mode()
    {
        const std::size_t m = pick(10);
        return m < 4 ? Mode::Read : (m < 9 ? Mode::Write : Mode::Delete);
    }
    std::optional<std::int64_t> ttl()
    {
        if (chance(30))
            return std::nullopt;
        return std::int64_t(pick(12'000));
    }
    std::string someLeaseId()
    {
        const auto &leases = model.leases();
        if (leases.empty() || chance(10))
            return "ls_bogus";
        return leases[pick(leases.size())].id;
    }

    void step(std::string &what);
    void compare(const std::string &what);
    std::string dump() const;

    std::mt19937_64 rng;
    ManualClock clock;
    RecordingListener listener;
    LeaseEngine engine;
    LeaseModel model;
};

void check(bool ok, const std::string &what, const std::string &detail)
{
    if (!ok)
        throw std::logic_error(what + ": " + detail);
}

void compareOutcome(const MOutcome &m, const AcquireResult &r, const std::string &what)
{
    if (m.kind == MOutcome::Granted) {
        check(std::holds_alternative<Grant>(r), what, "model granted, engine did not");
        return;
    }
    if (m.kind == MOutcome::Parked) {
        check(std::holds_alternative<Parked>(r), what, "model parked, engine did not");
        return;
    }
    check(std::holds_alternative<Refusal>(r), what, "model refused, engine did not");
    const Refusal &no = std::get<Refusal>(r);
    check(no.reason == m.reason, what,
          "reason " + std::string(refusalName(no.reason)) + " vs " +
              std::string(refusalName(m.reason)));
    if (m.reason == RefusalReason::LeaseHeld) {
        check(m.possibleHolders.count(no.holder) == 1, what, "holder " + no.holder);
        check(no.resource == m.resource, what, "resource " + no.resource + " vs " + m.resource);
        check(no.stampede && no.stampede->waiters == m.stampedeWaiters, what, "stampede");
    }
}

void Driver::step(std::string &what)
{
    const std::size_t op = pick(100);
    const TimeMs now = clock.nowMs();
    if (op < 35) {
        const std::string a = agent();
        const auto res = resources(3);
        const Mode m = mode();
        const auto t = ttl();
        const std::int64_t wait = chance(40) ? std::int64_t(1 + pick(15'000)) : 0;
        // The hooks' opt-in: park while holding, with deadlock detection as for every wait.
        const bool whileHolding = chance(30);
        what = "acquire " + a + " " + res[0].canonical() + " n=" + std::to_string(res.size()) +
               " mode=" + std::string(modeName(m)) + " wait=" + std::to_string(wait) +
               (whileHolding ? " whileHolding" : "");
        AcquireRequest request{a, res, m, t, wait, whileHolding};
        const AcquireResult r = engine.acquire(request);
        const std::uint64_t waitId =
            std::holds_alternative<Parked>(r) ? std::get<Parked>(r).waitId : 0;
        compareOutcome(model.acquire(now, a, res, m, t, wait, waitId, whileHolding), r, what);
    } else if (op < 55) {
        const std::string a = agent();
        std::vector<ResourceName> res;
        if (!chance(25))
            res = resources(2);
        std::string id;
        if (chance(20))
            id = someLeaseId();
        what = "release " + a + " n=" + std::to_string(res.size()) + " id=" + id;
        const auto r = engine.release(a, res, id);
        const MOutcome m = model.release(now, a, res, id);
        check(std::holds_alternative<Released>(r) == (m.kind == MOutcome::Granted), what, "kind");
        if (auto *no = std::get_if<Refusal>(&r))
            check(no->reason == m.reason, what, "release reason");
    } else if (op < 60) {
        const std::string a = agent();
        const ResourceName res = resource();
        const std::string id = chance(50) ? someLeaseId() : "";
        const auto t = ttl();
        what = "renew " + a + " " + res.canonical();
        const auto r = engine.renew(a, res, id, t);
        const MOutcome m = model.renew(now, a, res, id, t);
        check(std::holds_alternative<LeaseInfo>(r) == (m.kind == MOutcome::Granted), what, "kind");
        if (auto *no = std::get_if<Refusal>(&r))
            check(no->reason == m.reason, what, "renew reason");
    } else if (op < 67) {
        std::string a = agent();
        const std::string id = someLeaseId();
        for (const MLease &l : model.leases()) {
            if (l.id == id && chance(80))
                a = l.agent;
        }
        what = "pin " + a + " " + id;
        const auto r = engine.pin(a, id);
        const std::string pinId =
            std::holds_alternative<PinInfo>(r) ? std::get<PinInfo>(r).pinId : "";
        const MOutcome m = model.pin(now, a, id, pinId);
        check(std::holds_alternative<PinInfo>(r) == (m.kind == MOutcome::Granted), what, "kind");
        if (auto *no = std::get_if<Refusal>(&r))
            check(no->reason == m.reason, what, "pin reason");
    } else if (op < 73) {
        std::string a = agent();
        std::string pinId = "pn_bogus";
        if (!model.pins().empty() && chance(90)) {
            auto it = model.pins().begin();
            std::advance(it, std::ptrdiff_t(pick(model.pins().size())));
            pinId = it->first;
            for (const MLease &l : model.leases()) {
                if (l.id == it->second.leaseId && chance(85))
                    a = l.agent;
            }
        }
        what = "unpin " + a + " " + pinId;
        const auto r = engine.unpin(a, pinId);
        const MOutcome m = model.unpin(now, a, pinId);
        check(std::holds_alternative<PinInfo>(r) == (m.kind == MOutcome::Granted), what, "kind");
        if (auto *no = std::get_if<Refusal>(&r))
            check(no->reason == m.reason, what, "unpin reason");
    } else if (op < 77) {
        if (model.parked().empty())
            return;
        const std::uint64_t id = model.parked()[pick(model.parked().size())].id;
        what = "cancel " + std::to_string(id);
        engine.cancelWait(id);
        model.cancelWait(now, id);
    } else if (op < 80) {
        const std::size_t lever = pick(20);
        if (lever < 8) {
            const std::string a = agent();
            what = "releaseHolder " + a;
            check(engine.releaseHolder("op", a) == model.releaseHolder(now, a), what, "count");
        } else if (lever < 14) {
            const std::string id = someLeaseId();
            what = "releaseLease " + id;
            check(engine.releaseLease("op", id) == model.releaseLease(now, id), what, "found");
        } else if (lever < 15) {
            what = "releaseAll";
            check(engine.releaseAll("op") == model.releaseAll(now), what, "count");
        } else if (lever < 18) {
            const std::string a = agent();
            const bool on = chance(50);
            what = "suspend " + a + (on ? " on" : " off");
            engine.suspend("op", a, on);
            model.suspend(now, a, on);
        } else {
            const bool on = chance(30);
            what = std::string("pause ") + (on ? "on" : "off");
            engine.pause("op", on);
            model.pause(now, on);
        }
    } else {
        const TimeMs delta = chance(10) ? TimeMs(pick(20'000)) : TimeMs(pick(1'500));
        what = "advance " + std::to_string(delta);
        clock.advance(delta);
        engine.expireDue();
        model.expireDue(clock.nowMs());
        for (const LeaseInfo &l : engine.snapshot().leases)
            check(l.pendingRelease || l.expiresAt > clock.nowMs(), what, "lease past deadline");
    }
}

void Driver::compare(const std::string &what)
{
    if (qEnvironmentVariableIsSet("LEASEHOLD_MODEL_TRACE")) {
        for (const auto &[id, outcome] : listener.ended) {
            std::string tokens;
            if (const auto *g = std::get_if<Grant>(&outcome)) {
                for (const LeaseInfo &l : g->leases)
                    tokens += " " + l.resource + "#" + std::to_string(l.token);
            }
            qInfo("  engine ended wait %llu%s", static_cast<unsigned long long>(id),
                  tokens.c_str());
        }
        for (const LedgerEvent &e : listener.events)
            qInfo("  engine event %s %s %s %s", std::string(eventKindName(e.kind)).c_str(),
                  e.actorDid.c_str(), e.resource.c_str(), e.reason.c_str());
        listener.events.clear();
    }
    engine.checkInvariants();
    const Snapshot s = engine.snapshot();
    // Tokens are unique and the model predicts them, so they identify leases on both sides.
    std::map<std::uint64_t, std::string> ids;
    std::map<std::uint64_t, const LeaseInfo *> byToken;
    for (const LeaseInfo &l : s.leases) {
        check(byToken.emplace(l.token, &l).second, what, "duplicate token");
        ids[l.token] = l.leaseId;
    }
    check(s.leases.size() == model.leases().size(), what,
          "lease count " + std::to_string(s.leases.size()) + " vs " +
              std::to_string(model.leases().size()));
    check(model.syncIds(ids), what, "lease ids differ or moved");
    for (const MLease &m : model.leases()) {
        const auto found = byToken.find(m.token);
        check(found != byToken.end(), what, "no lease with token " + std::to_string(m.token));
        const LeaseInfo &l = *found->second;
        const std::string at = " on " + l.resource + " of " + l.holder;
        check(l.holder == m.agent && l.resource == m.resource.canonical(), what, "identity" + at);
        check(l.mode == m.mode, what, "mode" + at);
        check(l.grantedAt == m.grantedAt, what, "grantedAt" + at);
        check(l.pendingRelease || l.expiresAt == m.expiresAt, what, "expiresAt" + at);
        check(l.pins == m.pins, what, "pins" + at);
        check(l.pendingRelease == (m.pending >= 0), what, "pending" + at);
    }
    check(s.nextToken == model.nextToken(), what, "next token");

    std::set<std::pair<std::uint64_t, std::string>> parked, mparked;
    std::set<std::tuple<std::string, std::string, TimeMs>> wants, mwants;
    for (const WaiterInfo &w : s.waiters) {
        if (w.parked)
            parked.insert({w.waitId, w.resource});
        else
            wants.insert({w.actorDid, w.resource, w.deadline});
    }
    for (const MWaiter &w : model.parked()) {
        for (const ResourceName &r : w.resources)
            mparked.insert({w.id, r.canonical()});
    }
    for (const auto &[key, w] : model.wants())
        mwants.insert({key.first, key.second, w.deadline});
    check(parked == mparked, what, "parked waiters differ");
    check(wants == mwants, what, "wants differ");

    std::set<std::string> pins, mpins;
    for (const PinInfo &p : s.pins)
        pins.insert(p.pinId + "/" + p.leaseId);
    for (const auto &[id, p] : model.pins())
        mpins.insert(id + "/" + p.leaseId);
    check(pins == mpins, what, "pins differ");

    for (const TrustInfo &t : s.trust)
        check(t.score == model.trust(t.actorDid), what,
              "trust of " + t.actorDid + " " + std::to_string(t.score) + " vs " +
                  std::to_string(model.trust(t.actorDid)));

    std::set<std::tuple<std::uint64_t, bool, int>> ended, mended;
    for (const auto &[id, outcome] : listener.ended) {
        const auto *no = std::get_if<Refusal>(&outcome);
        ended.insert({id, no == nullptr, no ? int(no->reason) : 0});
    }
    listener.ended.clear();
    for (const MWaitEnd &e : model.takeWaitEnds())
        mended.insert({e.id, e.granted, e.granted ? 0 : int(e.reason)});
    check(ended == mended, what, "ended waits differ");
}

std::string Driver::dump() const
{
    std::string out = "\nengine leases:";
    for (const LeaseInfo &l : engine.snapshot().leases)
        out += "\n  #" + std::to_string(l.token) + " " + l.holder + " " + l.resource + " " +
               std::string(modeName(l.mode)) + (l.pendingRelease ? " pending" : "") + " until " +
               std::to_string(l.expiresAt);
    out += "\nmodel leases:";
    for (const MLease &l : model.leases())
        out += "\n  #" + std::to_string(l.token) + " " + l.agent + " " + l.resource.canonical() +
               " " + std::string(modeName(l.mode)) + (l.pending >= 0 ? " pending" : "");
    out += "\nmodel parked (ticket order):";
    for (const MWaiter &w : model.parked()) {
        out += "\n  wait " + std::to_string(w.id) + " " + w.agent + " " +
               std::string(modeName(w.mode)) + " until " + std::to_string(w.deadline);
        for (const ResourceName &r : w.resources)
            out += " " + r.canonical();
    }
    return out;
}

} // namespace

void TstLeaseModel::randomOperationsMatchTheModel()
{
    std::uint64_t seed = std::random_device{}();
    if (qEnvironmentVariableIsSet("LEASEHOLD_SEED"))
        seed = qEnvironmentVariable("LEASEHOLD_SEED").toULongLong();
    int ops = 100'000;
    if (qEnvironmentVariableIsSet("LEASEHOLD_MODEL_OPS"))
        ops = qEnvironmentVariableIntValue("LEASEHOLD_MODEL_OPS");
    qInfo("model test: seed %llu, %d operations (replay with LEASEHOLD_SEED=%llu)",
          static_cast<unsigned long long>(seed), ops, static_cast<unsigned long long>(seed));

    Driver d(seed);
    std::vector<std::string> recent;
    std::size_t grants = 0;
    for (int i = 0; i < ops; ++i) {
        std::string what = "noop";
        if (qEnvironmentVariableIsSet("LEASEHOLD_TRACE_FROM") &&
            i >= qEnvironmentVariableIntValue("LEASEHOLD_TRACE_FROM"))
            qInfo("before step %d at %lld:%s", i, static_cast<long long>(d.clock.nowMs()),
                  d.dump().c_str());
        try {
            d.step(what);
            recent.push_back(std::to_string(i) + ": " + what);
            if (recent.size() > 12)
                recent.erase(recent.begin());
            d.compare(what);
        } catch (const std::exception &e) {
            std::string trail;
            for (const auto &r : recent)
                trail += "\n  " + r;
            QFAIL(qPrintable(QString("step %1 (seed %2): %3\nlast steps:%4%5")
                                 .arg(i)
                                 .arg(seed)
                                 .arg(e.what())
                                 .arg(QString::fromStdString(trail))
                                 .arg(QString::fromStdString(d.dump()))));
        }
    }
    grants = d.engine.counters().grants;
    qInfo("model test: %zu grants, %llu waits begun, %llu deadlocks refused", grants,
          static_cast<unsigned long long>(d.engine.counters().waitsBegun),
          static_cast<unsigned long long>(
              d.engine.counters().refusals[std::size_t(RefusalReason::Deadlock)]));
    QVERIFY(grants > std::size_t(ops) / 20);
    QVERIFY(d.engine.counters().waitsBegun > 0);
}

QTEST_APPLESS_MAIN(TstLeaseModel)
#include "tst_leasemodel.moc"
