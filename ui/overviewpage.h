#pragma once

#include <QWidget>

#include <deque>

class ConsoleState;
class QChart;
class QLabel;
class QLineSeries;
class QValueAxis;

// The overview: counters at a glance and a chart of the last five minutes (grants and refusals
// per second, leases held, waiters). Counters follow every frame; the chart takes one sample a
// second (sample()), so it costs the same however busy the engine is.
//
// Thread: the UI thread.
class OverviewPage : public QWidget
{
    Q_OBJECT

public:
    explicit OverviewPage(QWidget *parent = nullptr);

    void showState(const ConsoleState &state);
    // Adds a point for now to each line and drops what is older than the window.
    void sample(const ConsoleState &state);

    QString counterText(const QString &name) const;
    int samples() const { return int(m_points.size()); }

    static constexpr int kWindowSeconds = 300;

private:
    struct Point
    {
        double t, grants, refusals, leases, waiters;
    };
    QLabel *counter(const QString &name, const QString &title, int row, int column);

    class QGridLayout *m_grid;
    std::deque<Point> m_points;
    double m_t = 0;
    QChart *m_chart;
    QLineSeries *m_grants, *m_refusals, *m_leases, *m_waiters;
    QValueAxis *m_x, *m_rateAxis, *m_countAxis;
};
