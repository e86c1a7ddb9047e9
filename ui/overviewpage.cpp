#include "overviewpage.h"

#include "consolestate.h"

#include <QChart>
#include <QChartView>
#include <QGridLayout>
#include <QLabel>
#include <QLineSeries>
#include <QVBoxLayout>
#include <QValueAxis>

using namespace leasehold;

OverviewPage::OverviewPage(QWidget *parent)
    : QWidget(parent)
    , m_grid(new QGridLayout)
    , m_chart(new QChart)
    , m_grants(new QLineSeries)
    , m_refusals(new QLineSeries)
    , m_leases(new QLineSeries)
    , m_waiters(new QLineSeries)
    , m_x(new QValueAxis)
    , m_rateAxis(new QValueAxis)
    , m_countAxis(new QValueAxis)
{
    setObjectName(QStringLiteral("overviewPage"));
    counter("leases", tr("Leases held"), 0, 0);
    counter("waiters", tr("Parked waits"), 0, 1);
    counter("wants", tr("Recent refusals waiting"), 0, 2);
    counter("deadlocks", tr("Deadlocks (last min)"), 0, 3);
    counter("grantRate", tr("Grants / s"), 1, 0);
    counter("refusalRate", tr("Refusals / s"), 1, 1);
    counter("expiries", tr("Expired without release"), 1, 2);
    counter("agents", tr("Live agents (of all known)"), 1, 3);

    m_grants->setName(tr("grants/s"));
    m_refusals->setName(tr("refusals/s"));
    m_leases->setName(tr("leases"));
    m_waiters->setName(tr("waiters"));
    for (QLineSeries *s : {m_grants, m_refusals, m_leases, m_waiters})
        m_chart->addSeries(s);
    m_x->setRange(-kWindowSeconds, 0);
    m_x->setLabelFormat(QStringLiteral("%d s"));
    m_x->setTitleText(tr("seconds ago"));
    m_rateAxis->setTitleText(tr("per second"));
    m_countAxis->setTitleText(tr("count"));
    m_rateAxis->setLabelFormat(QStringLiteral("%d"));
    m_countAxis->setLabelFormat(QStringLiteral("%d"));
    m_chart->addAxis(m_x, Qt::AlignBottom);
    m_chart->addAxis(m_rateAxis, Qt::AlignLeft);
    m_chart->addAxis(m_countAxis, Qt::AlignRight);
    for (QLineSeries *s : {m_grants, m_refusals}) {
        s->attachAxis(m_x);
        s->attachAxis(m_rateAxis);
    }
    for (QLineSeries *s : {m_leases, m_waiters}) {
        s->attachAxis(m_x);
        s->attachAxis(m_countAxis);
    }
    m_chart->legend()->setAlignment(Qt::AlignBottom);
    m_chart->setTheme(palette().color(QPalette::Window).lightness() < 128
                          ? QChart::ChartThemeDark
                          : QChart::ChartThemeLight);
    m_chart->setBackgroundRoundness(0);
    m_chart->setMargins({4, 4, 4, 4});

    auto *view = new QChartView(m_chart, this);
    view->setRenderHint(QPainter::Antialiasing);
    view->setObjectName(QStringLiteral("chart"));
    view->setMinimumHeight(260);
    auto *layout = new QVBoxLayout(this);
    layout->addLayout(m_grid);
    layout->addWidget(view, 1);
}

QLabel *OverviewPage::counter(const QString &name, const QString &title, int row, int column)
{
    auto *box = new QWidget(this);
    auto *v = new QVBoxLayout(box);
    auto *value = new QLabel(QStringLiteral("0"), box);
    value->setObjectName(name);
    QFont big = value->font();
    big.setPointSizeF(big.pointSizeF() * 2.0);
    big.setBold(true);
    value->setFont(big);
    auto *caption = new QLabel(title, box);
    caption->setForegroundRole(QPalette::PlaceholderText);
    v->addWidget(value);
    v->addWidget(caption);
    v->setContentsMargins(8, 4, 8, 4);
    m_grid->addWidget(box, row, column);
    return value;
}

QString OverviewPage::counterText(const QString &name) const
{
    const auto *label = findChild<QLabel *>(name);
    return label ? label->text() : QString();
}

void OverviewPage::showState(const ConsoleState &state)
{
    const ConsoleFrame *f = state.frame();
    if (!f)
        return;
    const Snapshot &s = f->snapshot;
    int parked = 0;
    for (const WaiterInfo &w : s.waiters)
        parked += w.parked ? 1 : 0;
    int recent = int(s.deadlocks.size());
    for (const DeadlockRecord &d : state.deadlocks())
        recent += s.at - d.at < 60'000 ? 1 : 0;
    int live = 0;
    for (const AgentInfo &a : s.agents)
        live += a.via != 0 ? 1 : 0;
    auto set = [this](const char *name, const QString &text) {
        if (auto *label = findChild<QLabel *>(QLatin1String(name)); label && label->text() != text)
            label->setText(text);
    };
    set("leases", QString::number(s.leases.size()));
    set("waiters", QString::number(parked));
    set("wants", QString::number(int(s.waiters.size()) - parked));
    set("deadlocks", QString::number(recent));
    set("grantRate", QString::number(state.grantRate(), 'f', 0));
    set("refusalRate", QString::number(state.refusalRate(), 'f', 0));
    set("expiries", QString::number(s.counters.expiries));
    set("agents", tr("%1 of %2").arg(live).arg(s.agents.size()));
}

void OverviewPage::sample(const ConsoleState &state)
{
    const ConsoleFrame *f = state.frame();
    if (!f)
        return;
    int parked = 0;
    for (const WaiterInfo &w : f->snapshot.waiters)
        parked += w.parked ? 1 : 0;
    m_points.push_back({++m_t, state.grantRate(), state.refusalRate(),
                        double(f->snapshot.leases.size()), double(parked)});
    while (m_points.size() > std::size_t(kWindowSeconds) + 1)
        m_points.pop_front();

    QList<QPointF> g, r, l, w;
    double maxRate = 10, maxCount = 10;
    for (const Point &p : m_points) {
        const double x = p.t - m_t;
        g.append({x, p.grants});
        r.append({x, p.refusals});
        l.append({x, p.leases});
        w.append({x, p.waiters});
        maxRate = std::max({maxRate, p.grants, p.refusals});
        maxCount = std::max({maxCount, p.leases, p.waiters});
    }
    m_grants->replace(g);
    m_refusals->replace(r);
    m_leases->replace(l);
    m_waiters->replace(w);
    m_rateAxis->setRange(0, maxRate * 1.15);
    m_countAxis->setRange(0, maxCount * 1.15);
}
