// The console under --demo traffic: every view fills, a screenshot of each is saved (offscreen
// grab) for a person to look at, and the UI thread stays responsive while the demo and a
// synthetic 2 000 requests a second run: its event-loop latency is measured and reported.

#include "agentdetailpage.h"
#include "consoletest.h"
#include "demotraffic.h"
#include "ledgermodel.h"
#include "loaddriver.h"
#include "overviewpage.h"
#include "resourcetreepage.h"
#include "snapshottablemodel.h"
#include "tablepage.h"
#include "timelinepage.h"
#include "timelineview.h"
#include "waitgraphpage.h"

#include <QComboBox>
#include <QDir>
#include <QEventLoop>
#include <QJsonArray>
#include <QSortFilterProxyModel>
#include <QThread>
#include <QTreeWidget>

#include <algorithm>
#include <map>

using namespace consoletest;

namespace {

QString artifactDir()
{
    const QString dir =
        qEnvironmentVariable("LEASEHOLD_ARTIFACTS", QDir::temp().filePath("leasehold-artifacts"));
    QDir().mkpath(dir);
    return dir;
}

// Ends a helper thread however the test leaves (a failed check returns early).
struct StopThread
{
    void operator()(QThread *thread) const
    {
        thread->quit();
        thread->wait();
        delete thread;
    }
};
using ThreadPtr = std::unique_ptr<QThread, StopThread>;

// Starts `object` on a new thread, calling `start` once the thread runs.
template<class T> ThreadPtr runOnThread(T *object, void (T::*start)())
{
    ThreadPtr thread(new QThread);
    object->moveToThread(thread.get());
    QObject::connect(thread.get(), &QThread::started, object, start);
    QObject::connect(thread.get(), &QThread::finished, object, &QObject::deleteLater);
    thread->start();
    return thread;
}

double percentile(std::vector<double> values, double p)
{
    if (values.empty())
        return 0;
    std::sort(values.begin(), values.end());
    return values[std::min(values.size() - 1, std::size_t(p * double(values.size())))];
}

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif

} // namespace

class TestConsoleDemo : public QObject
{
    Q_OBJECT

private slots:
    void demoFillsEveryViewAndStaysResponsive();
};

void TestConsoleDemo::demoFillsEveryViewAndStaysResponsive()
{
    ConsoleFixture f;
    QVERIFY(f.started);
    QHash<QString, QByteArray> keys;
    QList<QPair<QString, QByteArray>> load;
    f.engine->call([&](Service &s) {
        for (const QString &did : DemoTraffic::agents())
            keys.insert(did, s.temporaryKey(did));
        for (int i = 0; i < 64; ++i) {
            const QString did = QStringLiteral("did:agent:load-%1").arg(i);
            load.append({did, s.temporaryKey(did)});
        }
    });
    auto *demo = new DemoTraffic({QUrl(f.url), keys, 6, 7});
    ThreadPtr demoThread = runOnThread(demo, &DemoTraffic::start);

    // Each view is photographed on the first frame that gives it rows.
    const QStringList views = {"Holders", "Queue",  "Deadlocks", "Trust",
                               "Pins",    "Agents", "Ledger"};
    QSet<QString> captured;
    const QString dir = artifactDir();
    auto capture = [&](const QString &name) {
        f.window->showView(name);
        QVERIFY(f.window->grab().save(QDir(dir).filePath("console-" + name.toLower() + ".png")));
        captured.insert(name);
    };
    QObject::connect(f.link.get(), &EngineLink::frameArrived, f.window.get(), [&] {
        for (const QString &name : views) {
            QAbstractItemModel *m = f.window->page(name)->proxy();
            if (!captured.contains(name) && m->rowCount() > 0)
                capture(name);
        }
        // The pictures are worked out only while shown: photographed once the frame has
        // something for them - the tree a crowd of waiters, the wait-for graph a deadlock
        // refused in the last minute besides.
        const ConsoleState &state = f.window->state();
        const leasehold::Snapshot &s = state.frame()->snapshot;
        if (!captured.contains("Resources") && s.waiters.size() >= 3) {
            f.window->showView("Resources");
            QVERIFY(f.window->resourceTree()->tree().maxContention() >= 3);
            QVERIFY(f.window->grab().save(QDir(dir).filePath("console-tree.png")));
            captured.insert("Resources");
        }
        // The timeline once a minute of the demo lies behind it, with its marks.
        const TimelinePage *timeline = f.window->timeline();
        if (!captured.contains("Timeline") && s.at - timeline->model().liveSince() >= 30'000 &&
            !state.deadlocks().empty()) {
            f.window->showView("Timeline");
            // The last 30 s: the demo's leases as bars rather than slivers.
            timeline->findChild<QComboBox *>("timelineSpan")->setCurrentIndex(0);
            QCOMPARE(timeline->view()->spanMs(), TimelineView::kMinSpanMs);
            QVERIFY(!timeline->view()->lanes().empty());
            QVERIFY(f.window->grab().save(QDir(dir).filePath("console-timeline.png")));
            captured.insert("Timeline");
        }
        if (!captured.contains("Wait graph") && s.waiters.size() >= 3 &&
            !state.deadlocks().empty() &&
            s.at - state.deadlocks().back().at < WaitGraphModel::kRefusedMemoryMs) {
            f.window->showView("Wait graph");
            QVERIFY(!f.window->waitGraph()->graph().refusedPath().isEmpty());
            QVERIFY(f.window->grab().save(QDir(dir).filePath("console-waitgraph.png")));
            captured.insert("Wait graph");
        }
    });
    QTRY_VERIFY_WITH_TIMEOUT(captured.size() == views.size() + 3, 60'000);
    QVERIFY(f.window->ledgerModel()->rowCount() > 10);

    // 10 000 live leases besides (an hour each, 64 names a call, from the load agents).
    QJsonArray names;
    for (int i = 0; i < 10'000; ++i) {
        names.append(QStringLiteral("lock:load/%1").arg(i, 5, 10, QLatin1Char('0')));
        if (names.size() == 64 || i == 9'999) {
            const Reply r =
                f.post(QStringLiteral("/lease"), {{"resources", names}, {"ttlMs", 3'600'000}},
                       load[i % load.size()].second);
            QCOMPARE(r.status, 200);
            names = {};
        }
    }
    QTRY_VERIFY_WITH_TIMEOUT(f.window->state().frame()->snapshot.leases.size() >= 10'000, 10'000);

    // Responsiveness: the demo plus synthetic load, while each busy view and picture is shown
    // in turn; a 10 ms timer on the UI thread measures how late the event loop runs it.
    auto *driver = new LoadDriver(f.url, load, 2000);
    ThreadPtr loadThread = runOnThread(driver, &LoadDriver::start);
    const bool bench = qEnvironmentVariableIsSet("LEASEHOLD_BENCH_UI") && !kSanitized;
    const int seconds = bench ? 10 : 2;
    const QStringList shown = {"Ledger", "Resources", "Timeline", "Wait graph", "Holders"};
    std::vector<double> lateness;
    const std::uint64_t framesBefore = f.window->framesApplied();
    const quint64 doneBefore = driver->completed.load();
    const qint64 startedMs = driver->elapsedMs.load();
    for (const QString &view : shown) {
        f.window->showView(view);
        if (view == QLatin1String("Holders")) // with the agent detail beside it
            f.window->showAgent(QStringLiteral("did:agent:load-0"));
        std::vector<double> late;
        QElapsedTimer clock;
        clock.start();
        qint64 last = clock.nsecsElapsed();
        QTimer probe;
        probe.setTimerType(Qt::PreciseTimer);
        probe.setInterval(10);
        QObject::connect(&probe, &QTimer::timeout, [&] {
            const qint64 now = clock.nsecsElapsed();
            late.push_back(std::max(0.0, double(now - last) / 1e6 - 10.0));
            last = now;
        });
        // The measurement window: the UI thread's own event loop for a few seconds (this is
        // what is measured, so it must really run; nothing here waits for an outcome).
        QEventLoop window;
        QTimer::singleShot(seconds * 1000, &window, &QEventLoop::quit);
        probe.start();
        window.exec();
        probe.stop();
        qInfo("ui-latency %s: p50 %.2f ms, p99 %.2f ms, max %.2f ms", qPrintable(view),
              percentile(late, 0.50), percentile(late, 0.99),
              late.empty() ? 0.0 : *std::max_element(late.begin(), late.end()));
        if (bench)
            QVERIFY2(
                percentile(late, 0.99) < 50.0,
                qPrintable(QStringLiteral("%1: p99 %2 ms").arg(view).arg(percentile(late, 0.99))));
        lateness.insert(lateness.end(), late.begin(), late.end());
    }
    const double measured = double(driver->elapsedMs.load() - startedMs) / 1000.0;
    const quint64 done = driver->completed.load() - doneBefore;
    const double p50 = percentile(lateness, 0.50), p99 = percentile(lateness, 0.99);
    const double worst = lateness.empty() ? 0 : *std::max_element(lateness.begin(), lateness.end());
    const double frameRate =
        double(f.window->framesApplied() - framesBefore) / double(seconds * shown.size());
    qInfo("ui-latency: %zu samples, p50 %.2f ms, p99 %.2f ms, max %.2f ms; %.1f frames/s; "
          "synthetic load %.0f requests/s completed (%llu failed), demo %llu requests, "
          "%zu live leases",
          lateness.size(), p50, p99, worst, frameRate, double(done) / std::max(measured, 0.001),
          static_cast<unsigned long long>(driver->failed.load()),
          static_cast<unsigned long long>(demo->requests()),
          f.window->state().frame()->snapshot.leases.size());
    loadThread.reset();

    QVERIFY(frameRate <= 11.0); // coalesced: never more than ten frames a second
    QVERIFY(done > 0);
    // The latency and load bounds are a benchmark's, not a test's: on a shared two-core machine
    // another process decides them as much as the console does. tests/bench/console_latency.sh
    // runs this with LEASEHOLD_BENCH_UI=1 to hold the optimised build to them.
    if (bench)
        QVERIFY2(double(done) / measured > 1500, "the synthetic load did not run at ~2 000/s");

    // Photographs again now that the demo has run a while (a view is taken on the next frame
    // that gives it rows), so the artifacts show a busy console rather than its first second.
    captured.clear();
    captured.insert("Timeline"); // kept from the demo's first minute, before the synthetic load
    QTRY_VERIFY_WITH_TIMEOUT(captured.size() == views.size() + 3, 60'000);

    // The overview after all that: counters and a chart with a few seconds of history.
    f.window->showView(QStringLiteral("Overview"));
    QVERIFY(f.window->overview()->samples() >= 5);
    QVERIFY(f.window->overview()->counterText(QStringLiteral("leases")).toInt() > 0);
    capture(QStringLiteral("Overview"));

    // The agent detail beside the Holders, for the agent holding most right now.
    std::map<std::string, int> held;
    for (const leasehold::LeaseInfo &l : f.window->state().frame()->snapshot.leases)
        ++held[l.holder];
    QVERIFY(!held.empty());
    const auto busiest = std::max_element(
        held.begin(), held.end(), [](const auto &a, const auto &b) { return a.second < b.second; });
    f.window->showView(QStringLiteral("Holders"));
    f.window->showAgent(QString::fromStdString(busiest->first));
    QVERIFY(f.window->agentDetail()->leases()->topLevelItemCount() > 0);
    QVERIFY(f.window->grab().save(QDir(dir).filePath("console-agent-detail.png")));
}

QTEST_MAIN(TestConsoleDemo)
#include "tst_consoledemo.moc"
