#include "timelineview.h"

#include "wording.h"

#include <QDateTime>
#include <QHelpEvent>
#include <QKeyEvent>
#include <QScrollBar>
#include <QToolTip>

#include <algorithm>
#include <cmath>

using Bar = TimelineModel::Bar;
using Mark = TimelineModel::Mark;

namespace {

QString q(const std::string &s)
{
    return QString::fromStdString(s);
}

QString clock(std::int64_t ms)
{
    return QDateTime::fromMSecsSinceEpoch(ms).toString(QStringLiteral("HH:mm:ss"));
}

QString endText(const Bar &b)
{
    switch (b.end) {
    case Bar::End::Open:
        return b.kind == Bar::Kind::Held ? QStringLiteral("held now") : QStringLiteral("waiting");
    case Bar::End::Released:
        return QStringLiteral("released");
    case Bar::End::Expired:
        return QStringLiteral("expired");
    case Bar::End::Admin:
        return QStringLiteral("released by an operator");
    case Bar::End::Gone:
        return QStringLiteral("ended (seen gone)");
    case Bar::End::Granted:
        return QStringLiteral("granted");
    case Bar::End::GaveUp:
        return QStringLiteral("gave up: ") + q(b.reason);
    }
    return {};
}

} // namespace

TimelineView::TimelineView(const TimelineModel &model, QWidget *parent)
    : QAbstractScrollArea(parent)
    , m_model(model)
{
    setObjectName(QStringLiteral("timelineView"));
    setAccessibleName(tr("Timeline"));
    setFocusPolicy(Qt::StrongFocus);
    viewport()->setMouseTracking(true);
    horizontalScrollBar()->setSingleStep(1);
    verticalScrollBar()->setSingleStep(kLaneHeight);
    connect(horizontalScrollBar(), &QScrollBar::valueChanged, this, [this](int seconds) {
        if (m_settingScroll)
            return;
        // The scroll bar counts seconds back from now: its maximum is the live edge.
        moveTo(m_model.now() - std::int64_t(horizontalScrollBar()->maximum() - seconds) * 1000);
    });
}

void TimelineView::setLaneBy(TimelineModel::LaneBy by)
{
    m_by = by;
    m_current = -1;
    rebuild();
}

void TimelineView::setFilter(const QString &filter)
{
    m_filter = filter.trimmed().toStdString();
    m_current = -1;
    rebuild();
}

void TimelineView::setSpanMs(std::int64_t span)
{
    const std::int64_t end = windowEnd();
    m_span = std::clamp(span, kMinSpanMs, kMaxSpanMs);
    m_end = end;
    rebuild();
    emit windowChanged();
}

void TimelineView::setFollowing(bool following)
{
    if (!following)
        m_end = windowEnd();
    m_following = following;
    rebuild();
    emit windowChanged();
}

std::int64_t TimelineView::windowEnd() const
{
    return m_following ? m_model.now() : std::min(m_end, m_model.now());
}

void TimelineView::ensureLanes() const
{
    if (!m_stale)
        return;
    const std::int64_t to = windowEnd();
    m_lanes = m_model.lanes(m_by, to - m_span, to, m_filter);
    m_fleetMarks = m_model.fleetMarks(to - m_span, to);
    m_stale = false;
}

void TimelineView::invalidate()
{
    // No repaint asked for: the next drawing (rebuild) comes with the frame's presentation,
    // and a paint before it works the lanes out itself.
    m_stale = true;
    m_lanes.clear();
    m_fleetMarks.clear();
}

void TimelineView::rebuild()
{
    m_stale = true;
    ensureLanes();
    if (m_current >= int(m_lanes.size()))
        m_current = int(m_lanes.size()) - 1;
    updateScrollBars();
    viewport()->update();
}

void TimelineView::updateScrollBars()
{
    ensureLanes();
    m_settingScroll = true;
    QScrollBar *v = verticalScrollBar();
    v->setPageStep(viewport()->height());
    v->setRange(
        0, std::max(0, kAxisHeight + int(m_lanes.size()) * kLaneHeight - viewport()->height()));
    QScrollBar *h = horizontalScrollBar();
    const int back = int((TimelineModel::kHorizonMs - m_span) / 1000);
    h->setRange(0, std::max(0, back));
    h->setPageStep(int(m_span / 1000));
    h->setValue(h->maximum() - int((m_model.now() - windowEnd()) / 1000));
    m_settingScroll = false;
}

double TimelineView::xOf(std::int64_t t) const
{
    const double width = std::max(1, viewport()->width() - kGutter);
    return kGutter + double(t - windowStart()) * width / double(m_span);
}

std::int64_t TimelineView::timeAt(double x) const
{
    const double width = std::max(1, viewport()->width() - kGutter);
    return windowStart() + std::int64_t((x - kGutter) * double(m_span) / width);
}

int TimelineView::laneTop(int lane) const
{
    return kAxisHeight + lane * kLaneHeight - verticalScrollBar()->value();
}

QColor TimelineView::colourOf(const std::string &key) const
{
    const std::size_t h = std::hash<std::string>{}(key);
    const bool dark = palette().color(QPalette::Base).lightness() < 128;
    return QColor::fromHsv(int(h % 360), dark ? 150 : 110, dark ? 170 : 225);
}

QRect TimelineView::barRect(const Bar &bar) const
{
    ensureLanes();
    for (std::size_t i = 0; i < m_lanes.size(); ++i) {
        const auto &bars = m_lanes[i].bars;
        if (std::find(bars.begin(), bars.end(), &bar) == bars.end())
            continue;
        const double left = std::max(double(kGutter), xOf(bar.from));
        const double right = std::min(double(viewport()->width()),
                                      xOf(bar.to == TimelineModel::kOpen ? windowEnd() : bar.to));
        const bool wait = bar.kind == Bar::Kind::Waited;
        return QRect(int(left), laneTop(int(i)) + (wait ? kWaitTop : kHeldTop),
                     std::max(2, int(right - left)), wait ? kWaitHeight : kHeldHeight);
    }
    return {};
}

QPoint TimelineView::markPoint(const Mark &mark) const
{
    ensureLanes();
    for (std::size_t i = 0; i < m_lanes.size(); ++i) {
        const auto &marks = m_lanes[i].marks;
        if (std::find(marks.begin(), marks.end(), &mark) != marks.end())
            return QPoint(int(xOf(mark.at)), laneTop(int(i)) + kLaneHeight / 2);
    }
    return {};
}

TimelineView::Hit TimelineView::hitAt(const QPoint &pos) const
{
    ensureLanes();
    Hit hit;
    if (pos.x() < kGutter || pos.y() < kAxisHeight)
        return hit;
    const int inLanes = pos.y() - kAxisHeight + verticalScrollBar()->value();
    const int lane = inLanes / kLaneHeight;
    if (lane < 0 || lane >= int(m_lanes.size()))
        return hit;
    hit.lane = lane;
    const double pxPerMs = double(viewport()->width() - kGutter) / double(m_span);
    const std::int64_t slack = std::int64_t(4 / std::max(pxPerMs, 1e-9));
    const std::int64_t t = timeAt(pos.x());
    // Marks sit on top of bars: the nearest within a few pixels wins.
    std::int64_t best = slack + 1;
    for (const Mark *m : m_lanes[std::size_t(lane)].marks) {
        const std::int64_t d = std::abs(m->at - t);
        if (d < best) {
            best = d;
            hit.mark = m;
        }
    }
    if (hit.mark)
        return hit;
    // Waits are drawn in the lane's lower strip, under the holders' bars.
    const bool lower = inLanes % kLaneHeight >= kWaitTop;
    for (const Bar *b : m_lanes[std::size_t(lane)].bars) {
        const std::int64_t to = b->to == TimelineModel::kOpen ? windowEnd() : b->to;
        if (t + slack >= b->from && t - slack <= to && (b->kind == Bar::Kind::Waited) == lower)
            hit.bar = b;
    }
    return hit;
}

QString TimelineView::describeAt(const QPoint &pos) const
{
    const Hit hit = hitAt(pos);
    if (hit.mark)
        return QStringLiteral("%1  %2\n%3")
            .arg(clock(hit.mark->at), q(hit.mark->resource), hit.mark->text);
    if (!hit.bar)
        return {};
    const Bar &b = *hit.bar;
    const std::int64_t to = b.to == TimelineModel::kOpen ? m_model.now() : b.to;
    if (b.kind == Bar::Kind::Waited)
        return tr("%1 waited for %2 (%3)\n%4 – %5 (%6): %7")
            .arg(q(b.agent), q(b.resource), QString::fromLatin1(leasehold::modeName(b.mode)),
                 clock(b.from), b.to == TimelineModel::kOpen ? tr("now") : clock(to),
                 leasehold::formatDuration(to - b.from),
                 b.reason.empty() ? endText(b) : q(b.reason));
    return tr("%1 held by %2 (%3, token %4)\nlease %5\n%6 – %7 (%8): %9")
        .arg(q(b.resource), q(b.agent), QString::fromLatin1(leasehold::modeName(b.mode)))
        .arg(b.token)
        .arg(q(b.leaseId), clock(b.from), b.to == TimelineModel::kOpen ? tr("now") : clock(to),
             leasehold::formatDuration(to - b.from), endText(b));
}

void TimelineView::activate(const Bar &bar)
{
    if (bar.kind == Bar::Kind::Held)
        emit leaseActivated(q(bar.leaseId), q(bar.resource), bar.end == Bar::End::Open);
}

void TimelineView::setCurrentLane(int lane)
{
    ensureLanes();
    if (m_lanes.empty())
        return;
    m_current = std::clamp(lane, 0, int(m_lanes.size()) - 1);
    const int top = m_current * kLaneHeight;
    QScrollBar *v = verticalScrollBar();
    if (top < v->value())
        v->setValue(top);
    else if (kAxisHeight + top + kLaneHeight > v->value() + viewport()->height())
        v->setValue(kAxisHeight + top + kLaneHeight - viewport()->height());
    setAccessibleDescription(q(m_lanes[std::size_t(m_current)].name));
    viewport()->update();
}

void TimelineView::zoom(double factor)
{
    setSpanMs(std::int64_t(double(m_span) * factor));
}

void TimelineView::moveTo(std::int64_t end)
{
    // No further back than the model keeps; at now (or past it) the window follows again.
    m_end = std::clamp(end, m_model.now() - kMaxSpanMs + m_span, m_model.now());
    m_following = m_end >= m_model.now();
    rebuild();
    emit windowChanged();
}

void TimelineView::keyPressEvent(QKeyEvent *event)
{
    ensureLanes();
    switch (event->key()) {
    case Qt::Key_Up:
        return setCurrentLane(m_current - 1);
    case Qt::Key_Down:
        return setCurrentLane(m_current + 1);
    case Qt::Key_PageUp:
        return setCurrentLane(m_current - viewport()->height() / kLaneHeight);
    case Qt::Key_PageDown:
        return setCurrentLane(m_current + viewport()->height() / kLaneHeight);
    case Qt::Key_Left:
        return moveTo(windowEnd() - m_span / 10);
    case Qt::Key_Right:
        return moveTo(windowEnd() + m_span / 10);
    case Qt::Key_Plus:
    case Qt::Key_Equal:
        return zoom(0.5);
    case Qt::Key_Minus:
        return zoom(2);
    case Qt::Key_End:
        return setFollowing(true);
    case Qt::Key_Return:
    case Qt::Key_Enter:
        if (m_current >= 0 && m_current < int(m_lanes.size())) {
            const Bar *newest = nullptr;
            for (const Bar *b : m_lanes[std::size_t(m_current)].bars) {
                if (b->kind == Bar::Kind::Held && (!newest || b->from > newest->from))
                    newest = b;
            }
            if (newest)
                activate(*newest);
        }
        return;
    default:
        QAbstractScrollArea::keyPressEvent(event);
    }
}

void TimelineView::mousePressEvent(QMouseEvent *event)
{
    const Hit hit = hitAt(event->position().toPoint());
    if (hit.lane >= 0)
        setCurrentLane(hit.lane);
    if (hit.bar && !hit.mark)
        activate(*hit.bar);
}

void TimelineView::mouseMoveEvent(QMouseEvent *event)
{
    const QString text = describeAt(event->position().toPoint());
    if (text.isEmpty())
        QToolTip::hideText();
    else
        QToolTip::showText(event->globalPosition().toPoint(), text, viewport());
}

bool TimelineView::viewportEvent(QEvent *event)
{
    if (event->type() == QEvent::ToolTip) {
        auto *help = static_cast<QHelpEvent *>(event);
        const QString text = describeAt(help->pos());
        if (text.isEmpty())
            QToolTip::hideText();
        else
            QToolTip::showText(help->globalPos(), text, viewport());
        return true;
    }
    return QAbstractScrollArea::viewportEvent(event);
}

void TimelineView::wheelEvent(QWheelEvent *event)
{
    const int steps = event->angleDelta().y() / 120;
    if (event->modifiers() & Qt::ControlModifier) {
        if (steps != 0)
            zoom(steps > 0 ? 0.5 : 2);
        event->accept();
        return;
    }
    if (event->modifiers() & Qt::ShiftModifier || event->angleDelta().x() != 0) {
        const int dx = event->angleDelta().x() ? event->angleDelta().x() : event->angleDelta().y();
        moveTo(windowEnd() - std::int64_t(dx / 120) * m_span / 10);
        event->accept();
        return;
    }
    QAbstractScrollArea::wheelEvent(event);
}

void TimelineView::scrollContentsBy(int, int)
{
    viewport()->update();
}

void TimelineView::resizeEvent(QResizeEvent *event)
{
    QAbstractScrollArea::resizeEvent(event);
    updateScrollBars();
}
