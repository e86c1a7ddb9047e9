#pragma once

#include "waitgraphmodel.h"

#include "statepage.h"

class ConsoleState;
class QGraphicsScene;
class QGraphicsView;
class QLabel;

// The console's wait-for graph: who is stuck behind whom. Agents are boxes (with what they
// hold), an arrow runs from an agent that waits to the agent holding what it wants, labelled
// with the resource: solid for a parked wait, dashed for a recent refusal that still wants it.
// A live cycle and the newest refused deadlock are drawn in red, the refused request dotted,
// and the path is written out above the picture. Boxes keep their places between frames. The
// view takes the keyboard focus like any widget; its selected (or first) box then has it, and
// the arrow keys move the selection from box to box.
//
// The graph is worked out and redrawn only while the page is visible (and then only when it
// changed), so a busy engine costs it nothing while the operator looks elsewhere.
//
// Thread: the UI thread.
class WaitGraphPage : public StatePage
{
    Q_OBJECT

public:
    explicit WaitGraphPage(QWidget *parent = nullptr);

    const WaitGraphModel &graph() const { return m_graph; }
    QGraphicsView *view() const { return m_view; }
    QString summary() const;

signals:
    // An agent's box was selected (by mouse or keyboard).
    void agentSelected(const QString &did);

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;
    void changeEvent(QEvent *event) override;

private:
    void refresh(const ConsoleState &state) override;
    void redraw();
    void drawEdge(const WaitGraphModel::Edge &edge);

    WaitGraphModel m_graph;
    bool m_drawn = false; // the scene shows the graph at least once
    QLabel *m_summary;
    QGraphicsScene *m_scene;
    QGraphicsView *m_view;
};
