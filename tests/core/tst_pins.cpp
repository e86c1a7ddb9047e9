#include "enginetest.h"

#include <QTest>

using namespace leasehold;
using namespace leasehold::test;

class TstPins : public QObject, private EngineFixture
{
    Q_OBJECT

private slots:
    void init();
    void cleanup();

    void pinDelaysReleaseUntilUnpin();
    void pinDelaysExpiryAndKeepsItsTrustEffect();
    void pinnedResourceIsNotGrantedToAnyone();
    void pinBoundDropsAForgottenPin();
    void pinRefusals();
    void adminReleaseWaitsForPins();

private:
    std::string grantOne(const std::string &actor, const std::string &resource,
                         std::int64_t ttl = 30'000);
};

void TstPins::init()
{
    reset();
}

void TstPins::cleanup()
{
    finish();
}

std::string TstPins::grantOne(const std::string &actor, const std::string &resource,
                              std::int64_t ttl)
{
    const auto r = m_engine->acquire(req(actor, {resource}, Mode::Write, 0, ttl));
    return grantOf(r).leases.at(0).leaseId;
}

void TstPins::pinDelaysReleaseUntilUnpin()
{
    const std::string id = grantOne("a", "src/a.cpp");
    const auto pin = m_engine->pin("a", id);
    const std::string pinId = std::get<PinInfo>(pin).pinId;
    const auto rel = m_engine->release("a", {name("src/a.cpp")});
    QVERIFY(std::get<Released>(rel).released.at(0).pendingRelease);
    QCOMPARE(m_engine->leaseCount(), 1u);
    QCOMPARE(m_engine->snapshot().trust.at(0).score, 0.0); // not yet
    QVERIFY(std::holds_alternative<PinInfo>(m_engine->unpin("a", pinId)));
    QCOMPARE(m_engine->leaseCount(), 0u);
    QCOMPARE(m_engine->snapshot().trust.at(0).score, 0.5);
}

void TstPins::pinDelaysExpiryAndKeepsItsTrustEffect()
{
    const std::string id = grantOne("a", "src/a.cpp", 2'000);
    const std::string p1 = std::get<PinInfo>(m_engine->pin("a", id)).pinId;
    const std::string p2 = std::get<PinInfo>(m_engine->pin("a", id)).pinId;
    m_clock.advance(2'500);
    m_engine->expireDue();
    QCOMPARE(m_engine->leaseCount(), 1u);
    QVERIFY(m_engine->lease(id)->pendingRelease);
    m_engine->unpin("a", p1);
    QCOMPARE(m_engine->leaseCount(), 1u);
    m_engine->unpin("a", p2);
    QCOMPARE(m_engine->leaseCount(), 0u);
    QCOMPARE(m_engine->snapshot().trust.at(0).score, -5.0);
    QCOMPARE(m_listener.count(EventKind::Expired), 1);
}

void TstPins::pinnedResourceIsNotGrantedToAnyone()
{
    const std::string id = grantOne("a", "src/a.cpp", 2'000);
    const std::string pinId = std::get<PinInfo>(m_engine->pin("a", id)).pinId;
    m_clock.advance(3'000);
    m_engine->expireDue();
    QCOMPARE(refusalOf(m_engine->acquire(req("b", {"src/a.cpp"}))).holder, std::string("a"));
    // Not even the holder gets a pending lease back.
    QVERIFY(!isGrant(m_engine->acquire(req("a", {"src/a.cpp"}))));
    const auto parked = m_engine->acquire(req("c", {"src/a.cpp"}, Mode::Write, 5'000));
    QVERIFY(std::holds_alternative<Parked>(parked));
    m_engine->unpin("a", pinId);
    const WaitOutcome *outcome = m_listener.outcomeOf(waitIdOf(parked));
    QVERIFY(outcome && std::holds_alternative<Grant>(*outcome));
}

void TstPins::pinBoundDropsAForgottenPin()
{
    const std::string id = grantOne("a", "src/a.cpp", 120'000);
    m_engine->pin("a", id);
    m_engine->release("a", {});
    QCOMPARE(m_engine->leaseCount(), 1u);
    m_clock.advance(60'000);
    m_engine->expireDue();
    QCOMPARE(m_engine->leaseCount(), 0u);
    QCOMPARE(m_engine->counters().pinsDropped, 1u);
    bool logged = false;
    for (const auto &e : m_listener.events)
        logged |= e.kind == EventKind::Unpinned && e.reason == "pin_bound";
    QVERIFY(logged);
}

void TstPins::pinRefusals()
{
    const std::string id = grantOne("a", "src/a.cpp");
    QCOMPARE(std::get<Refusal>(m_engine->pin("b", id)).reason, RefusalReason::NotHeld);
    QCOMPARE(std::get<Refusal>(m_engine->pin("a", "ls_missing")).reason, RefusalReason::StaleLease);
    const std::string pinId = std::get<PinInfo>(m_engine->pin("a", id)).pinId;
    QCOMPARE(std::get<Refusal>(m_engine->unpin("b", pinId)).reason, RefusalReason::NotHeld);
    m_engine->unpin("a", pinId);
    QCOMPARE(std::get<Refusal>(m_engine->unpin("a", pinId)).reason, RefusalReason::StaleLease);
    m_engine->pin("a", id);
    m_engine->release("a", {});
    QCOMPARE(std::get<Refusal>(m_engine->pin("a", id)).reason, RefusalReason::StaleLease);
}

void TstPins::adminReleaseWaitsForPins()
{
    const std::string id = grantOne("a", "src/a.cpp");
    const std::string pinId = std::get<PinInfo>(m_engine->pin("a", id)).pinId;
    QCOMPARE(m_engine->releaseAll("did:op:alice"), 1);
    QCOMPARE(m_engine->leaseCount(), 1u);
    m_engine->unpin("a", pinId);
    QCOMPARE(m_engine->leaseCount(), 0u);
    QCOMPARE(m_engine->snapshot().trust.at(0).score, 0.0);
}

QTEST_APPLESS_MAIN(TstPins)
#include "tst_pins.moc"
