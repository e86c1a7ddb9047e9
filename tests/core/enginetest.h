#pragma once

// Shared helpers for engine tests: a recording listener and terse request builders.

#include "leaseengine.h"

#include <QTest>

#include <map>
#include <stdexcept>

namespace leasehold::test {

class RecordingListener : public EngineListener
{
public:
    void onEvent(const LedgerEvent &e) override { events.push_back(e); }
    void onWaitBegan(std::uint64_t id, const std::string &actor) override
    {
        began.emplace_back(id, actor);
        if (throwOnBegin)
            throw std::runtime_error("hook failed");
    }
    void onWaitEnded(std::uint64_t id, const WaitOutcome &outcome) override
    {
        ended.emplace_back(id, outcome);
        if (throwOnEnd)
            throw std::runtime_error("hook failed");
    }

    int count(EventKind kind) const
    {
        int n = 0;
        for (const auto &e : events)
            n += e.kind == kind ? 1 : 0;
        return n;
    }
    const WaitOutcome *outcomeOf(std::uint64_t id) const
    {
        const WaitOutcome *found = nullptr;
        for (const auto &[wid, outcome] : ended) {
            if (wid == id) {
                if (found)
                    throw std::logic_error("wait ended twice");
                found = &outcome;
            }
        }
        return found;
    }

    std::vector<LedgerEvent> events;
    std::vector<std::pair<std::uint64_t, std::string>> began;
    std::vector<std::pair<std::uint64_t, WaitOutcome>> ended;
    bool throwOnBegin = false;
    bool throwOnEnd = false;
};

inline std::unique_ptr<IdGenerator> fixedIds()
{
    return std::make_unique<IdGenerator>(IdGenerator::Key{0x1234, 0x5678});
}

// The engine under test with a manual clock and a recording listener. Test classes derive
// from it, call reset() in init() and finish() (which checks every invariant) in cleanup().
class EngineFixture
{
protected:
    void reset(EngineConfig config = {})
    {
        m_clock.set(1'700'000'000'000);
        m_engine = std::make_unique<LeaseEngine>(m_clock, std::move(config), fixedIds());
        m_listener = RecordingListener();
        m_engine->setListener(&m_listener);
    }
    void finish()
    {
        m_engine->checkInvariants();
        m_engine.reset();
    }

    ManualClock m_clock;
    std::unique_ptr<LeaseEngine> m_engine;
    RecordingListener m_listener;
};

inline ResourceName name(const std::string &text)
{
    static const ResourceParser parser("/work/space");
    auto parsed = parser.parse(text);
    if (auto *error = std::get_if<NameError>(&parsed))
        throw std::invalid_argument(text + ": " + error->message);
    return std::get<ResourceName>(parsed);
}

inline AcquireRequest req(const std::string &actor, std::initializer_list<std::string> resources,
                          Mode mode = Mode::Write, std::int64_t waitMs = 0,
                          std::optional<std::int64_t> ttlMs = {})
{
    AcquireRequest r;
    r.actor = actor;
    for (const auto &text : resources)
        r.resources.push_back(name(text));
    r.mode = mode;
    r.waitMs = waitMs;
    r.ttlMs = ttlMs;
    return r;
}

inline bool isGrant(const AcquireResult &r)
{
    return std::holds_alternative<Grant>(r);
}
inline const Grant &grantOf(const AcquireResult &r)
{
    return std::get<Grant>(r);
}
inline const Refusal &refusalOf(const AcquireResult &r)
{
    return std::get<Refusal>(r);
}
inline std::uint64_t waitIdOf(const AcquireResult &r)
{
    return std::get<Parked>(r).waitId;
}

} // namespace leasehold::test
