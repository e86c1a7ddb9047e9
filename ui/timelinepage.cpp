#include "timelinepage.h"

#include "consolestate.h"
#include "timelineview.h"

#include <QComboBox>
#include <QDateTime>
#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QSignalBlocker>
#include <QToolButton>
#include <QVBoxLayout>

using namespace leasehold;

TimelinePage::TimelinePage(QWidget *parent)
    : StatePage(parent)
    , m_view(new TimelineView(m_model, this))
    , m_by(new QComboBox(this))
    , m_filter(new QLineEdit(this))
    , m_span(new QComboBox(this))
    , m_live(new QToolButton(this))
    , m_summary(new QLabel(this))
{
    setObjectName(QStringLiteral("timelinePage"));
    m_by->setObjectName(QStringLiteral("timelineLanes"));
    m_by->setAccessibleName(tr("Lanes"));
    m_by->addItem(tr("By resource"));
    m_by->addItem(tr("By agent"));
    m_filter->setObjectName(QStringLiteral("timelineFilter"));
    m_filter->setPlaceholderText(
        tr("Resource or agent… (a full name reads its past from the store)"));
    m_filter->setAccessibleName(tr("Show the lanes whose name contains"));
    m_filter->setClearButtonEnabled(true);
    m_span->setObjectName(QStringLiteral("timelineSpan"));
    m_span->setAccessibleName(tr("Window"));
    m_span->addItem(tr("last 30 s"), 30'000);
    for (const int minutes : {1, 5, 10, 15, 30, 60})
        m_span->addItem(tr("last %n min", nullptr, minutes), minutes * 60'000);
    m_span->setCurrentIndex(m_span->findData(qlonglong(m_view->spanMs())));
    m_live->setObjectName(QStringLiteral("timelineLive"));
    m_live->setText(tr("Live"));
    m_live->setToolTip(tr("Follow live time (End)"));
    m_live->setCheckable(true);
    m_live->setChecked(true);
    m_summary->setObjectName(QStringLiteral("timelineSummary"));
    m_summary->setWordWrap(true);

    auto *bar = new QHBoxLayout;
    bar->addWidget(m_by);
    bar->addWidget(m_filter, 1);
    bar->addWidget(m_span);
    bar->addWidget(m_live);
    auto *column = new QVBoxLayout(this);
    column->addLayout(bar);
    column->addWidget(m_summary);
    column->addWidget(m_view, 1);

    connect(m_by, &QComboBox::currentIndexChanged, this, [this](int index) {
        m_view->setLaneBy(index == 0 ? TimelineModel::LaneBy::Resource
                                     : TimelineModel::LaneBy::Agent);
        readHistoryIfNeeded();
        updateSummary();
    });
    connect(m_filter, &QLineEdit::textChanged, this, [this](const QString &text) {
        m_view->setFilter(text);
        readHistoryIfNeeded();
        updateSummary();
    });
    connect(m_span, &QComboBox::currentIndexChanged, this,
            [this] { m_view->setSpanMs(m_span->currentData().toLongLong()); });
    connect(m_live, &QToolButton::toggled, m_view, &TimelineView::setFollowing);
    connect(m_view, &TimelineView::windowChanged, this, [this] {
        m_live->setChecked(m_view->following());
        // Zoomed by keys or wheel: the box names the width when it is one of its own.
        const QSignalBlocker quiet(m_span);
        m_span->setCurrentIndex(m_span->findData(qlonglong(m_view->spanMs())));
        readHistoryIfNeeded();
        updateSummary();
    });
    connect(m_view, &TimelineView::leaseActivated, this, &TimelinePage::leaseActivated);
    setTabOrder(m_by, m_filter);
    setTabOrder(m_filter, m_span);
    setTabOrder(m_span, m_live);
    setTabOrder(m_live, m_view);
}

void TimelinePage::absorb(const ConsoleFrame &frame)
{
    m_model.absorb(frame);
    m_view->invalidate(); // its lanes point into the model
}

void TimelinePage::showResource(const QString &path)
{
    m_by->setCurrentIndex(0);
    m_filter->setText(path);
}

void TimelinePage::refresh(const ConsoleState &)
{
    m_view->rebuild();
    readHistoryIfNeeded();
    updateSummary();
}

void TimelinePage::readHistoryIfNeeded()
{
    if (!m_reader || m_model.firstLiveSeq() == 0 || !isVisible())
        return;
    const bool byResource = m_by->currentIndex() == 0;
    const std::string text = m_filter->text().trimmed().toStdString();
    // A name the store can look up: a resource ("fs:src", "lock:deploy") or a DID.
    const bool named =
        byResource ? text.find(':') != std::string::npos : text.rfind("did:", 0) == 0;
    LedgerFilter want;
    (byResource ? want.resource : want.actor) = named ? text : std::string();
    const std::int64_t start = m_view->windowStart();
    want.fromAt = start - start % 60'000; // whole minutes, so scrolling does not read again
    if (!named && start >= m_model.liveSince())
        return; // the live part has seen all of it
    if (m_askedAny && m_asked.resource == want.resource && m_asked.actor == want.actor &&
        m_asked.fromAt <= want.fromAt)
        return; // held, or being read
    m_asked = want;
    m_askedAny = true;
    m_historyEvents = 0;
    const std::uint64_t before = m_model.firstLiveSeq() - 1;
    m_pending =
        named ? m_reader(0, kHistoryPage, want)
              : m_reader(before > kFleetHistory ? before - kFleetHistory : 0, kFleetHistory, want);
}

void TimelinePage::takeHistory(quint64 request, const LedgerPagePtr &page)
{
    if (request != m_pending || !page)
        return; // an answer to a question no longer asked
    m_model.absorbHistory(m_asked, *page);
    m_view->invalidate();
    m_historyEvents += page->size();
    const bool named = !m_asked.resource.empty() || !m_asked.actor.empty();
    m_pending = 0;
    if (named && page->size() == kHistoryPage && m_historyEvents < kMaxHistory)
        m_pending = m_reader(page->back().seq, kHistoryPage, m_asked);
    if (isVisible()) {
        m_view->rebuild();
        updateSummary();
    }
}

QString TimelinePage::summary() const
{
    return m_summary->text();
}

void TimelinePage::updateSummary()
{
    int held = 0, waiting = 0;
    for (const TimelineModel::Lane &lane : m_view->lanes()) {
        for (const TimelineModel::Bar *b : lane.bars) {
            if (b->end == TimelineModel::Bar::End::Open)
                ++(b->kind == TimelineModel::Bar::Kind::Held ? held : waiting);
        }
    }
    QString text = tr("%n lane(s)", nullptr, int(m_view->lanes().size())) + QStringLiteral(" · ") +
                   tr("%n held now", nullptr, held) + QStringLiteral(" · ") +
                   tr("%n waiting now", nullptr, waiting);
    if (!m_view->following())
        text += QStringLiteral(" · ") + tr("up to %1")
                                            .arg(QDateTime::fromMSecsSinceEpoch(m_view->windowEnd())
                                                     .toString(QStringLiteral("HH:mm:ss")));
    if (m_askedAny) {
        const std::string &name = m_asked.resource.empty() ? m_asked.actor : m_asked.resource;
        const QString what = name.empty() ? tr("before the console started")
                                          : tr("for %1").arg(QString::fromStdString(name));
        text += QStringLiteral(" · ") +
                (m_pending ? tr("reading the stored ledger %1…").arg(what)
                           : tr("%n stored event(s) %1", nullptr, int(m_historyEvents)).arg(what));
    }
    if (!m_model.gaps().empty())
        text += QStringLiteral(" · ") + tr("shaded: bursts the console skipped");
    m_summary->setText(text);
}

void TimelinePage::changeEvent(QEvent *event)
{
    StatePage::changeEvent(event);
    if (event->type() == QEvent::PaletteChange)
        m_view->viewport()->update();
}
