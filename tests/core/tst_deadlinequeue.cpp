#include "deadlinequeue.h"

#include <QTest>

#include <algorithm>
#include <memory>
#include <random>

using namespace leasehold;

class TstDeadlineQueue : public QObject
{
    Q_OBJECT

private slots:
    void topIsAlwaysTheEarliestDeadline();
    void rescheduleAndCancelKeepOrder();
};

void TstDeadlineQueue::topIsAlwaysTheEarliestDeadline()
{
    std::mt19937 rng(7);
    std::vector<std::unique_ptr<Timed>> items;
    DeadlineQueue queue;
    for (int i = 0; i < 500; ++i) {
        items.push_back(std::make_unique<Timed>(TimerKind::LeaseExpiry));
        queue.schedule(items.back().get(), static_cast<TimeMs>(rng() % 10'000));
    }
    QVERIFY(queue.isConsistent());
    TimeMs last = -1;
    while (!queue.empty()) {
        Timed *t = queue.top();
        QVERIFY(t->deadline >= last);
        last = t->deadline;
        queue.cancel(t);
        QCOMPARE(t->heapSlot, Timed::kNotQueued);
    }
}

void TstDeadlineQueue::rescheduleAndCancelKeepOrder()
{
    std::mt19937 rng(11);
    std::vector<std::unique_ptr<Timed>> items;
    DeadlineQueue queue;
    for (int i = 0; i < 300; ++i) {
        items.push_back(std::make_unique<Timed>(TimerKind::PinBound));
        queue.schedule(items.back().get(), static_cast<TimeMs>(rng() % 1000));
    }
    for (int round = 0; round < 2000; ++round) {
        Timed *t = items[rng() % items.size()].get();
        if (rng() % 3 == 0)
            queue.cancel(t);
        else
            queue.schedule(t, static_cast<TimeMs>(rng() % 1000));
        QVERIFY(queue.isConsistent());
    }
    const auto queued = std::count_if(
        items.begin(), items.end(), [](const auto &t) { return t->heapSlot != Timed::kNotQueued; });
    QCOMPARE(queue.size(), static_cast<std::size_t>(queued));
    TimeMs minimum = 1'000'000;
    for (const auto &t : items) {
        if (t->heapSlot != Timed::kNotQueued)
            minimum = std::min(minimum, t->deadline);
    }
    if (!queue.empty())
        QCOMPARE(queue.nextDeadline(), minimum);
}

QTEST_APPLESS_MAIN(TstDeadlineQueue)
#include "tst_deadlinequeue.moc"
