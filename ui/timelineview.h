#pragma once

#include "timelinemodel.h"

#include <QAbstractScrollArea>

// The timeline drawn: one lane per resource (or agent), time running left to right over a
// window of kMinSpanMs..kMaxSpanMs that ends at the live edge (following it) or wherever the
// operator scrolled. Held leases are solid bars in their holder's colour (in agent lanes, their
// resource's), parked waits hatched; a bar that expired ends in red, one a lever ended in
// orange. Marks: refusals as ticks, deadlocks as red diamonds, expiries as red triangles,
// changes through the guarded tools as dots, levers as blue lines (across every lane when they
// concern the whole fleet). Stretches the feed skipped are shaded.
//
// Keyboard: Up/Down pick a lane, Left/Right scroll, +/- zoom, End follows live time again,
// Enter opens the picked lane's newest lease. Hovering a bar or mark shows what it is.
//
// Thread: the UI thread.
class TimelineView : public QAbstractScrollArea
{
    Q_OBJECT

public:
    explicit TimelineView(const TimelineModel &model, QWidget *parent = nullptr);

    void setLaneBy(TimelineModel::LaneBy by);
    TimelineModel::LaneBy laneBy() const { return m_by; }
    void setFilter(const QString &filter);
    // The window's width; it keeps its end (or keeps following).
    void setSpanMs(std::int64_t span);
    std::int64_t spanMs() const { return m_span; }
    // Follow live time (the window ends at the model's now), or hold the window where it is.
    void setFollowing(bool following);
    bool following() const { return m_following; }
    // The window shown: [windowStart(), windowEnd()].
    std::int64_t windowEnd() const;
    std::int64_t windowStart() const { return windowEnd() - m_span; }
    // Works out the lanes again (after a frame, or history arrived); repaints.
    void rebuild();
    // The model changed under the lanes (they point into it): they are worked out again when
    // next needed, never read stale.
    void invalidate();

    const std::vector<TimelineModel::Lane> &lanes() const
    {
        ensureLanes();
        return m_lanes;
    }
    int currentLane() const { return m_current; }
    // Where the bar (or mark) sits on screen, in viewport coordinates: its lane's row and the
    // time's column; what the operator would point at. Null when it is not in view.
    QRect barRect(const TimelineModel::Bar &bar) const;
    QPoint markPoint(const TimelineModel::Mark &mark) const;
    // What hovering at `pos` (viewport coordinates) shows; empty over nothing.
    QString describeAt(const QPoint &pos) const;

    static constexpr std::int64_t kMinSpanMs = 30'000;
    static constexpr std::int64_t kMaxSpanMs = TimelineModel::kHorizonMs;
    static constexpr int kLaneHeight = 22;
    static constexpr int kAxisHeight = 24;
    static constexpr int kGutter = 230;
    // Within a lane: the held bars' strip, then the waits' strip below it.
    static constexpr int kHeldTop = 2;
    static constexpr int kHeldHeight = 12;
    static constexpr int kWaitTop = 15;
    static constexpr int kWaitHeight = 5;

signals:
    // A held bar was clicked (or Enter pressed on a lane): its lease, and whether it is live.
    void leaseActivated(const QString &leaseId, const QString &resource, bool live);
    void windowChanged();

protected:
    void paintEvent(QPaintEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;
    void mouseMoveEvent(QMouseEvent *event) override;
    void mousePressEvent(QMouseEvent *event) override;
    void wheelEvent(QWheelEvent *event) override;
    void keyPressEvent(QKeyEvent *event) override;
    void scrollContentsBy(int dx, int dy) override;
    bool viewportEvent(QEvent *event) override;

private:
    struct Hit
    {
        const TimelineModel::Bar *bar = nullptr;
        const TimelineModel::Mark *mark = nullptr;
        int lane = -1;
    };
    Hit hitAt(const QPoint &pos) const;
    double xOf(std::int64_t t) const;
    std::int64_t timeAt(double x) const;
    int laneTop(int lane) const;
    void updateScrollBars();
    void zoom(double factor);
    // Ends the window at `end` (kept within what the model holds), following at now.
    void moveTo(std::int64_t end);
    void setCurrentLane(int lane);
    void activate(const TimelineModel::Bar &bar);
    QColor colourOf(const std::string &key) const;
    void paintAxis(QPainter &p, const QRect &area) const;
    void paintLane(QPainter &p, const TimelineModel::Lane &lane, int top) const;

    const TimelineModel &m_model;
    TimelineModel::LaneBy m_by = TimelineModel::LaneBy::Resource;
    std::string m_filter;
    std::int64_t m_span = 5 * 60'000;
    std::int64_t m_end = 0; // the window's end while not following
    bool m_following = true;
    void ensureLanes() const;

    // Worked out from the model on demand: pointers into it, valid until it next changes.
    mutable std::vector<TimelineModel::Lane> m_lanes;
    mutable std::vector<const TimelineModel::Mark *> m_fleetMarks;
    mutable bool m_stale = true;
    int m_current = -1;
    bool m_settingScroll = false;
};
