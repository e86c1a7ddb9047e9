// Release requests: a waiting agent or an operator asks a holder to let go; the request ends
// when the lease does (answered), when the holder declines, and falls overdue (still open) when
// its deadline passes unanswered. It never changes who holds what.

#include "enginetest.h"

#include <QTest>

using namespace leasehold;
using namespace leasehold::test;

namespace {

ReleaseRequestAsk ask(const std::string &requester, const std::string &resource,
                      std::int64_t deadlineMs = 0, Urgency urgency = Urgency::Normal)
{
    ReleaseRequestAsk a;
    a.requester = requester;
    a.resource = name(resource);
    a.reason = "need it for the release";
    a.urgency = urgency;
    a.deadlineMs = deadlineMs;
    return a;
}

const LedgerEvent *lastOf(const RecordingListener &l, EventKind kind)
{
    for (auto e = l.events.rbegin(); e != l.events.rend(); ++e)
        if (e->kind == kind)
            return &*e;
    return nullptr;
}

const ReleaseRequestInfo &infoOf(const RequestResult &r)
{
    if (const auto *f = std::get_if<RequestFailure>(&r))
        throw std::logic_error("request failed: " + std::to_string(int(f->error)));
    return std::get<ReleaseRequestInfo>(r);
}

} // namespace

class TstReleaseRequests : public QObject, private EngineFixture
{
    Q_OBJECT

private slots:
    void init() { reset(); }
    void cleanup() { finish(); }

    void aRefusedAgentRaisesARequestTheHolderSees();
    void aParkedWaiterMayAskAndAnOperatorMayAlways();
    void anAgentWithNoBusinessIsTurnedAway();
    void theHolderDeclinesAndOnlyTheHolder();
    void aReleaseAnswersIt();
    void anExpiryAnswersIt();
    void theDeadlineMakesItOverdueAtExactlyThatMoment();
    void askingAgainReturnsTheOpenOne();
    void aRequestNeverChangesWhoHoldsWhat();
    void nobodyHoldingItOrOwnLeaseIsSaid();
};

void TstReleaseRequests::aRefusedAgentRaisesARequestTheHolderSees()
{
    QVERIFY(isGrant(m_engine->acquire(req("a", {"lock:deploy"}))));
    QVERIFY(!isGrant(m_engine->acquire(req("b", {"lock:deploy"})))); // b is refused: a want
    QVERIFY(!m_engine->hasReleaseRequests());
    const ReleaseRequestInfo r =
        infoOf(m_engine->raiseReleaseRequest(ask("b", "lock:deploy", 0, Urgency::High)));
    QVERIFY(r.requestId.rfind("rr_", 0) == 0);
    QCOMPARE(r.holder, std::string("a"));
    QCOMPARE(r.requester, std::string("b"));
    QCOMPARE(r.urgency, Urgency::High);
    QCOMPARE(r.deadlineAt, 0);
    QVERIFY(m_engine->hasReleaseRequests());
    QCOMPARE(m_engine->releaseRequestsFor("a").size(), std::size_t(1));
    QVERIFY(m_engine->releaseRequestsFor("b").empty());
    QCOMPARE(m_engine->agentView("a").releaseRequests.at(0).requestId, r.requestId);
    QCOMPARE(m_engine->snapshot().releaseRequests.size(), std::size_t(1));
    const LedgerEvent *e = lastOf(m_listener, EventKind::ReleaseRequestRaised);
    QVERIFY(e);
    QCOMPARE(eventKindName(e->kind), std::string_view("coordination.release_request.raised"));
    QCOMPARE(e->actorDid, std::string("b"));
    QCOMPARE(e->resource, std::string("lock:deploy"));
    QCOMPARE(e->reason, std::string("need it for the release"));
    QCOMPARE(e->facts.requestId, r.requestId);
    QCOMPARE(e->facts.urgency, std::string("high"));
    QCOMPARE(e->facts.requester, std::string("b"));
    QCOMPARE(e->facts.holder, std::string("a"));
    m_engine->checkInvariants();
}

void TstReleaseRequests::aParkedWaiterMayAskAndAnOperatorMayAlways()
{
    QVERIFY(isGrant(m_engine->acquire(req("a", {"fs:src"}))));
    // Parked on a file below the folder a holds.
    QVERIFY(std::holds_alternative<Parked>(
        m_engine->acquire(req("b", {"fs:src/app.cpp"}, Mode::Write, 10'000))));
    const ReleaseRequestInfo parked = infoOf(m_engine->raiseReleaseRequest(ask("b", "fs:src")));
    QCOMPARE(parked.resource, std::string("fs:src"));
    ReleaseRequestAsk op = ask("did:op:alice", "fs:src");
    op.byOperator = true;
    const ReleaseRequestInfo byOp = infoOf(m_engine->raiseReleaseRequest(op));
    QVERIFY(byOp.byOperator);
    QVERIFY(byOp.requestId != parked.requestId);
    QCOMPARE(m_engine->releaseRequestsFor("a").size(), std::size_t(2));
    m_engine->checkInvariants();
}

void TstReleaseRequests::anAgentWithNoBusinessIsTurnedAway()
{
    QVERIFY(isGrant(m_engine->acquire(req("a", {"lock:deploy"}))));
    QVERIFY(isGrant(m_engine->acquire(req("b", {"lock:other-thing"})))); // busy elsewhere
    const RequestResult none = m_engine->raiseReleaseRequest(ask("c", "lock:deploy"));
    QCOMPARE(std::get<RequestFailure>(none).error, RequestError::NoBusiness);
    QCOMPARE(std::get<RequestFailure>(none).holder, std::string("a"));
    const RequestResult elsewhere = m_engine->raiseReleaseRequest(ask("b", "lock:deploy"));
    QCOMPARE(std::get<RequestFailure>(elsewhere).error, RequestError::NoBusiness);
    QVERIFY(!m_engine->hasReleaseRequests());
    QCOMPARE(m_listener.count(EventKind::ReleaseRequestRaised), 0);
    // Once the want lapses, the business is gone too.
    QVERIFY(!isGrant(m_engine->acquire(req("c", {"lock:deploy"}))));
    m_clock.advance(60'000);
    m_engine->expireDue();
    QVERIFY(isGrant(m_engine->acquire(req("a", {"lock:deploy"})))); // a renews it
    QCOMPARE(std::get<RequestFailure>(m_engine->raiseReleaseRequest(ask("c", "lock:deploy"))).error,
             RequestError::NoBusiness);
}

void TstReleaseRequests::theHolderDeclinesAndOnlyTheHolder()
{
    QVERIFY(isGrant(m_engine->acquire(req("a", {"lock:deploy"}))));
    QVERIFY(!isGrant(m_engine->acquire(req("b", {"lock:deploy"}))));
    const std::string id =
        infoOf(m_engine->raiseReleaseRequest(ask("b", "lock:deploy", 5'000))).requestId;
    QCOMPARE(std::get<RequestFailure>(m_engine->declineReleaseRequest("b", id, "no")).error,
             RequestError::NotHolder);
    QCOMPARE(std::get<RequestFailure>(m_engine->declineReleaseRequest("a", "rr_x", "no")).error,
             RequestError::UnknownRequest);
    const ReleaseRequestInfo declined =
        infoOf(m_engine->declineReleaseRequest("a", id, "mid-deploy"));
    QCOMPARE(declined.requestId, id);
    QVERIFY(!m_engine->hasReleaseRequests());
    const LedgerEvent *e = lastOf(m_listener, EventKind::ReleaseRequestDeclined);
    QVERIFY(e);
    QCOMPARE(e->actorDid, std::string("a"));
    QCOMPARE(e->reason, std::string("mid-deploy"));
    QCOMPARE(e->facts.requester, std::string("b"));
    // Its deadline went with it: nothing falls overdue later.
    m_clock.advance(10'000);
    m_engine->expireDue();
    QCOMPARE(m_listener.count(EventKind::ReleaseRequestOverdue), 0);
    QCOMPARE(std::get<RequestFailure>(m_engine->declineReleaseRequest("a", id, "again")).error,
             RequestError::UnknownRequest);
}

void TstReleaseRequests::aReleaseAnswersIt()
{
    QVERIFY(isGrant(m_engine->acquire(req("a", {"lock:deploy"}))));
    QVERIFY(!isGrant(m_engine->acquire(req("b", {"lock:deploy"}))));
    infoOf(m_engine->raiseReleaseRequest(ask("b", "lock:deploy", 5'000)));
    QVERIFY(std::holds_alternative<Released>(m_engine->release("a", {name("lock:deploy")})));
    QVERIFY(!m_engine->hasReleaseRequests());
    m_engine->checkInvariants();
    m_clock.advance(10'000);
    m_engine->expireDue();
    QCOMPARE(m_listener.count(EventKind::ReleaseRequestOverdue), 0);
}

void TstReleaseRequests::anExpiryAnswersIt()
{
    QVERIFY(isGrant(m_engine->acquire(req("a", {"lock:deploy"}, Mode::Write, 0, 2'000))));
    QVERIFY(!isGrant(m_engine->acquire(req("b", {"lock:deploy"}))));
    // The deadline falls at the very moment the lease expires: the expiry answers it first.
    infoOf(m_engine->raiseReleaseRequest(ask("b", "lock:deploy", 2'000)));
    m_clock.advance(2'000);
    m_engine->expireDue();
    QCOMPARE(m_listener.count(EventKind::Expired), 1);
    QCOMPARE(m_listener.count(EventKind::ReleaseRequestOverdue), 0);
    QVERIFY(!m_engine->hasReleaseRequests());
}

void TstReleaseRequests::theDeadlineMakesItOverdueAtExactlyThatMoment()
{
    QVERIFY(isGrant(m_engine->acquire(req("a", {"lock:deploy"}, Mode::Write, 0, 60'000))));
    QVERIFY(!isGrant(m_engine->acquire(req("b", {"lock:deploy"}))));
    const ReleaseRequestInfo r =
        infoOf(m_engine->raiseReleaseRequest(ask("b", "lock:deploy", 3'000)));
    QCOMPARE(r.deadlineAt, m_clock.nowMs() + 3'000);
    QCOMPARE(*m_engine->nextDeadline(), r.deadlineAt);
    m_clock.advance(2'999);
    m_engine->expireDue();
    QVERIFY(!m_engine->releaseRequestsFor("a").at(0).overdue);
    m_clock.advance(1);
    m_engine->expireDue();
    const std::vector<ReleaseRequestInfo> open = m_engine->releaseRequestsFor("a");
    QCOMPARE(open.size(), std::size_t(1)); // still open
    QVERIFY(open[0].overdue);
    const LedgerEvent *e = lastOf(m_listener, EventKind::ReleaseRequestOverdue);
    QVERIFY(e);
    QCOMPARE(e->at, r.deadlineAt);
    QCOMPARE(e->actorDid, std::string("a"));
    QCOMPARE(e->facts.deadlineAt, r.deadlineAt);
    QCOMPARE(m_listener.count(EventKind::ReleaseRequestOverdue), 1);
    m_engine->checkInvariants();
    // Overdue once; the holder still holds; a release still answers it.
    m_clock.advance(10'000);
    m_engine->expireDue();
    QCOMPARE(m_listener.count(EventKind::ReleaseRequestOverdue), 1);
    QCOMPARE(m_engine->lease(r.leaseId)->holder, std::string("a"));
    QCOMPARE(m_engine->releaseLease("did:op:alice", r.leaseId), true);
    QVERIFY(!m_engine->hasReleaseRequests());
}

void TstReleaseRequests::askingAgainReturnsTheOpenOne()
{
    QVERIFY(isGrant(m_engine->acquire(req("a", {"lock:deploy"}))));
    QVERIFY(!isGrant(m_engine->acquire(req("b", {"lock:deploy"}))));
    const ReleaseRequestInfo first = infoOf(m_engine->raiseReleaseRequest(ask("b", "lock:deploy")));
    ReleaseRequestAsk byLease = ask("b", "lock:deploy");
    byLease.resource.reset();
    byLease.leaseId = first.leaseId;
    const ReleaseRequestInfo again = infoOf(m_engine->raiseReleaseRequest(byLease));
    QCOMPARE(again.requestId, first.requestId);
    QVERIFY(again.existing);
    QCOMPARE(m_listener.count(EventKind::ReleaseRequestRaised), 1);
    byLease.leaseId = "ls_nothing";
    QCOMPARE(std::get<RequestFailure>(m_engine->raiseReleaseRequest(byLease)).error,
             RequestError::UnknownLease);
}

void TstReleaseRequests::aRequestNeverChangesWhoHoldsWhat()
{
    const Grant g = grantOf(m_engine->acquire(req("a", {"lock:deploy"})));
    QVERIFY(!isGrant(m_engine->acquire(req("b", {"lock:deploy"}))));
    infoOf(m_engine->raiseReleaseRequest(ask("b", "lock:deploy", 1'000, Urgency::High)));
    m_clock.advance(1'000);
    m_engine->expireDue();
    const Snapshot s = m_engine->snapshot();
    QCOMPARE(s.leases.size(), std::size_t(1));
    QCOMPARE(s.leases[0].leaseId, g.leases[0].leaseId);
    QCOMPARE(s.leases[0].holder, std::string("a"));
    QVERIFY(!isGrant(m_engine->acquire(req("b", {"lock:deploy"}))));
    // Renewing the lease keeps the request open: it is the same lease.
    QVERIFY(std::holds_alternative<LeaseInfo>(
        m_engine->renew("a", name("lock:deploy"), g.leases[0].leaseId)));
    QCOMPARE(m_engine->releaseRequestsFor("a").size(), std::size_t(1));
}

void TstReleaseRequests::nobodyHoldingItOrOwnLeaseIsSaid()
{
    QCOMPARE(std::get<RequestFailure>(m_engine->raiseReleaseRequest(ask("b", "lock:free"))).error,
             RequestError::NotHeld);
    QVERIFY(isGrant(m_engine->acquire(req("a", {"lock:deploy"}))));
    QCOMPARE(std::get<RequestFailure>(m_engine->raiseReleaseRequest(ask("a", "lock:deploy"))).error,
             RequestError::OwnLease);
}

QTEST_APPLESS_MAIN(TstReleaseRequests)
#include "tst_releaserequests.moc"
