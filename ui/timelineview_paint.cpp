// TimelineView's drawing: the axis, the lanes' names, bars and marks, skipped stretches and
// fleet-wide levers. Everything outside the window or the viewport is passed over, and within
// a lane two things of a kind on one pixel column are drawn once, so a busy hour costs about
// what the screen has pixels for.

#include "timelineview.h"

#include <QDateTime>
#include <QPainter>
#include <QPainterPath>
#include <QScrollBar>

#include <array>

using Bar = TimelineModel::Bar;
using Mark = TimelineModel::Mark;

namespace {

// Colours that read on light and dark palettes alike.
const QColor kRed(205, 45, 40);
const QColor kOrange(230, 140, 20);
const QColor kBlue(40, 110, 220);
const QColor kGreen(40, 160, 80);

// A tick every so often, whatever the zoom: about one per 100 pixels.
std::int64_t tickStep(std::int64_t span, int width)
{
    static constexpr std::array<std::int64_t, 10> steps = {
        1'000, 2'000, 5'000, 10'000, 15'000, 30'000, 60'000, 120'000, 300'000, 600'000};
    for (const std::int64_t s : steps) {
        if (double(span) / double(s) <= std::max(1.0, width / 100.0))
            return s;
    }
    return 900'000;
}

} // namespace

void TimelineView::paintEvent(QPaintEvent *)
{
    if (m_stale) { // a frame came since the lanes were worked out
        ensureLanes();
        updateScrollBars();
    }
    QPainter p(viewport());
    const QPalette &pal = palette();
    const QRect area = viewport()->rect();
    p.fillRect(area, pal.color(QPalette::Base));
    const int first = std::max(0, verticalScrollBar()->value() / kLaneHeight - 1);
    const int last = std::min(int(m_lanes.size()), first + area.height() / kLaneHeight + 2);
    for (int i = first; i < last; ++i) {
        const int top = laneTop(i);
        if (i % 2)
            p.fillRect(QRect(0, top, area.width(), kLaneHeight),
                       pal.color(QPalette::AlternateBase));
        if (i == m_current)
            p.fillRect(QRect(0, top, kGutter, kLaneHeight),
                       pal.color(hasFocus() ? QPalette::Highlight : QPalette::Mid));
        paintLane(p, m_lanes[std::size_t(i)], top);
    }
    // What the feed skipped: shaded across every lane, so no one reads it as calm.
    p.setPen(Qt::NoPen);
    for (const auto &[from, to] : m_model.gaps()) {
        if (to < windowStart() || from > windowEnd())
            continue;
        const double l = std::max(double(kGutter), xOf(from));
        const double r = std::max(l + 2, xOf(to));
        p.fillRect(QRectF(l, kAxisHeight, r - l, area.height()),
                   QBrush(pal.color(QPalette::Mid), Qt::Dense6Pattern));
    }
    // Levers on the whole fleet: a line through every lane.
    p.setPen(QPen(kBlue, 1, Qt::DashLine));
    for (const Mark *m : m_fleetMarks) {
        const double x = xOf(m->at);
        p.drawLine(QPointF(x, kAxisHeight), QPointF(x, area.height()));
    }
    if (m_lanes.empty()) {
        p.setPen(pal.color(QPalette::PlaceholderText));
        p.drawText(area.adjusted(kGutter, kAxisHeight, 0, 0), Qt::AlignCenter,
                   m_filter.empty() ? tr("Nothing held, waited for or refused in this window")
                                    : tr("Nothing matches the filter in this window"));
    }
    paintAxis(p, area);
}

void TimelineView::paintAxis(QPainter &p, const QRect &area) const
{
    const QPalette &pal = palette();
    const QRect axis(0, 0, area.width(), kAxisHeight);
    p.fillRect(axis, pal.color(QPalette::Window));
    p.setPen(pal.color(QPalette::WindowText));
    p.drawText(axis.adjusted(6, 0, -6, 0), Qt::AlignVCenter | Qt::AlignLeft,
               m_by == TimelineModel::LaneBy::Resource ? tr("Resource") : tr("Agent"));
    const std::int64_t step = tickStep(m_span, area.width() - kGutter);
    const std::int64_t start = windowStart();
    // Ticks on whole steps of the local clock, labelled with it.
    const std::int64_t offset = QDateTime::fromMSecsSinceEpoch(start).offsetFromUtc() * 1000LL;
    for (std::int64_t t = (start + offset) / step * step - offset + step; t <= windowEnd();
         t += step) {
        const double x = xOf(t);
        p.setPen(pal.color(QPalette::Mid));
        p.drawLine(QPointF(x, kAxisHeight - 5), QPointF(x, area.height()));
        p.setPen(pal.color(QPalette::WindowText));
        p.drawText(QRectF(x - 40, 0, 80, kAxisHeight - 5), Qt::AlignCenter,
                   QDateTime::fromMSecsSinceEpoch(t).toString(
                       step < 60'000 ? QStringLiteral("HH:mm:ss") : QStringLiteral("HH:mm")));
    }
    if (m_following) {
        const double x = xOf(m_model.now()) - 1;
        p.setPen(QPen(kGreen, 2));
        p.drawLine(QPointF(x, 0), QPointF(x, area.height()));
    }
    p.setPen(pal.color(QPalette::Mid));
    p.drawLine(QPointF(kGutter, 0), QPointF(kGutter, area.height()));
    p.drawLine(QPointF(0, kAxisHeight), QPointF(area.width(), kAxisHeight));
}

void TimelineView::paintLane(QPainter &p, const TimelineModel::Lane &lane, int top) const
{
    const QPalette &pal = palette();
    const int width = viewport()->width();
    const std::int64_t end = windowEnd();
    p.setPen(pal.color(QPalette::Text));
    p.drawText(QRect(6, top, kGutter - 12, kLaneHeight), Qt::AlignVCenter | Qt::AlignLeft,
               p.fontMetrics().elidedText(QString::fromStdString(lane.name), Qt::ElideMiddle,
                                          kGutter - 12));
    p.save();
    p.setClipRect(QRect(kGutter + 1, top, width - kGutter - 1, kLaneHeight));
    int lastHeld = -1, lastWait = -1;
    for (const Bar *b : lane.bars) {
        const double l = std::max(double(kGutter), xOf(b->from));
        const double r = std::min(double(width), xOf(b->to == TimelineModel::kOpen ? end : b->to));
        const bool wait = b->kind == Bar::Kind::Waited;
        int &lastX = wait ? lastWait : lastHeld;
        if (r - l < 1 && int(l) == lastX)
            continue; // another sliver on the same pixel
        lastX = int(l);
        const QRectF rect(l, top + (wait ? kWaitTop : kHeldTop), std::max(1.0, r - l),
                          wait ? kWaitHeight : kHeldHeight);
        if (wait) {
            p.fillRect(rect, QBrush(pal.color(QPalette::Text), Qt::BDiagPattern));
            continue;
        }
        const std::string &by = m_by == TimelineModel::LaneBy::Resource ? b->agent : b->resource;
        QColor fill = colourOf(by);
        if (b->mode == leasehold::Mode::Read)
            fill.setAlpha(150);
        p.fillRect(rect, fill);
        if (rect.width() > 60) {
            // "did:agent:worker-3" reads "worker-3" in a bar; the tooltip has it whole.
            QString label = QString::fromStdString(by);
            const qsizetype method =
                label.startsWith(QLatin1String("did:")) ? label.indexOf(QLatin1Char(':'), 4) : -1;
            if (method > 0 && method + 1 < label.size())
                label = label.mid(method + 1);
            p.setPen(Qt::black); // on the light fill of any palette
            p.drawText(rect.adjusted(4, 0, -2, 0), Qt::AlignVCenter | Qt::AlignLeft,
                       p.fontMetrics().elidedText(label, Qt::ElideMiddle, int(rect.width()) - 6));
        }
        const QColor cap = b->end == Bar::End::Expired ? kRed
                           : b->end == Bar::End::Admin ? kOrange
                                                       : QColor();
        if (cap.isValid())
            p.fillRect(QRectF(rect.right() - 2, rect.top(), 3, rect.height()), cap);
    }
    std::array<int, 5> lastMark;
    lastMark.fill(-1);
    p.setRenderHint(QPainter::Antialiasing);
    for (const Mark *m : lane.marks) {
        const int x = int(xOf(m->at));
        int &lastX = lastMark[std::size_t(m->kind)];
        if (x == lastX)
            continue;
        lastX = x;
        const double cy = top + kLaneHeight / 2.0;
        switch (m->kind) {
        case Mark::Kind::Refusal:
            p.setPen(QPen(pal.color(QPalette::Text), 1));
            p.drawLine(QPointF(x, top + 2), QPointF(x, top + 8));
            break;
        case Mark::Kind::Deadlock: {
            QPainterPath diamond;
            diamond.moveTo(x, cy - 6);
            diamond.lineTo(x + 5, cy);
            diamond.lineTo(x, cy + 6);
            diamond.lineTo(x - 5, cy);
            diamond.closeSubpath();
            p.fillPath(diamond, kRed);
            break;
        }
        case Mark::Kind::Expiry: {
            QPainterPath triangle;
            triangle.moveTo(x - 5, top + 2);
            triangle.lineTo(x + 5, top + 2);
            triangle.lineTo(x, top + 10);
            triangle.closeSubpath();
            p.fillPath(triangle, kRed);
            break;
        }
        case Mark::Kind::Lever:
            p.setPen(QPen(kBlue, 2));
            p.drawLine(QPointF(x, top + 1), QPointF(x, top + kLaneHeight - 1));
            break;
        case Mark::Kind::Change:
            p.setPen(Qt::NoPen);
            p.setBrush(kGreen);
            p.drawEllipse(QPointF(x, cy), 3, 3);
            break;
        }
    }
    p.restore();
}
