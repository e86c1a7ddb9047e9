#pragma once

#include "waitgraphmodel.h"

#include "statepage.h"

class ConsoleState;
class QGraphicsScene;
class QGraphicsView;
class QLabel;

// The console's wait-for graph: who is stuck behind whom, laid out in layers (holders on the
// left, those waiting for them to the right). Agents are boxes (with what they hold), an arrow
// runs from an agent that waits to the agent holding what it wants, labelled with the
// resource: solid for a parked wait, dashed for a recent refusal that still wants it. A cycle
// is drawn as a loop; a live one and the newest refused deadlock in red, the refused request
// dotted, and the path is written out above the picture. A crowd waiting for one resource is
// one box with its count, which a click expands. Boxes keep their places between frames.
//
// Ctrl+wheel, Ctrl++ and Ctrl+- zoom, Ctrl+0 fits the picture again, dragging pans; the find
// field selects and centres the first agent whose name contains what is typed (opening its
// crowd). The view takes the keyboard focus like any widget; its selected (or first) box then
// has it, and the arrow keys move the selection from box to box.
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
    // Selects and centres the first agent whose name contains `text`; false when none does.
    bool find(const QString &text);
    // The scale the view draws at (1: full size).
    double zoom() const;
    // The crowd `key` is drawn agent by agent from now on, or (false) as one box again.
    void openCrowd(const QString &key, bool open);

signals:
    // An agent's box was selected (by mouse or keyboard).
    void agentSelected(const QString &did);

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;
    void changeEvent(QEvent *event) override;

private:
    void refresh(const ConsoleState &state) override;
    void redraw();
    void drawNode(const WaitGraphModel::Node &node);
    void drawEdge(const WaitGraphModel::Edge &edge);
    void zoomBy(double factor);
    void select(const QString &did);

    WaitGraphModel m_graph;
    bool m_drawn = false;      // the scene shows the graph at least once
    bool m_userZoomed = false; // the operator chose a scale: redraws keep it
    QLabel *m_summary;
    class QLineEdit *m_find;
    QGraphicsScene *m_scene;
    QGraphicsView *m_view;
};
