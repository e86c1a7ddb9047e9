#include "waitgraphpage.h"

#include <QAction>
#include <QEvent>
#include <QGraphicsPathItem>
#include <QGraphicsScene>
#include <QGraphicsSimpleTextItem>
#include <QGraphicsView>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QVBoxLayout>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>

namespace {

constexpr double kBoxWidth = 210;
constexpr double kBoxHeight = 64;
const QColor kRed(205, 45, 40); // reads on light and dark palettes alike

QString elided(const QString &text, int max)
{
    return text.size() <= max ? text : text.left(max - 1) + QChar(0x2026);
}

// Where the line from `centre` toward `toward` leaves the box around `centre`.
QPointF boxExit(QPointF centre, QPointF toward)
{
    const double dx = toward.x() - centre.x();
    const double dy = toward.y() - centre.y();
    const double sx = dx != 0 ? (kBoxWidth / 2) / std::abs(dx) : 1e9;
    const double sy = dy != 0 ? (kBoxHeight / 2) / std::abs(dy) : 1e9;
    const double t = std::min({sx, sy, 1.0});
    return centre + QPointF(dx * t, dy * t);
}

// An agent's box. With the keyboard, the arrow keys move the selection to the nearest box
// that way, so the picture can be walked without a mouse.
class AgentBox : public QGraphicsPathItem
{
public:
    using QGraphicsPathItem::QGraphicsPathItem;

protected:
    void focusInEvent(QFocusEvent *event) override
    {
        QGraphicsPathItem::focusInEvent(event);
        if (!isSelected()) {
            scene()->clearSelection();
            setSelected(true);
        }
    }
    void keyPressEvent(QKeyEvent *event) override
    {
        QPointF way;
        switch (event->key()) {
        case Qt::Key_Left:
            way = {-1, 0};
            break;
        case Qt::Key_Right:
            way = {1, 0};
            break;
        case Qt::Key_Up:
            way = {0, -1};
            break;
        case Qt::Key_Down:
            way = {0, 1};
            break;
        default:
            return QGraphicsPathItem::keyPressEvent(event);
        }
        QGraphicsItem *best = nullptr;
        double bestScore = 0;
        for (QGraphicsItem *other : scene()->items()) {
            if (other == this || !(other->flags() & QGraphicsItem::ItemIsFocusable))
                continue;
            const QPointF d = other->pos() - pos();
            const double along = d.x() * way.x() + d.y() * way.y();
            const double across = std::abs(d.x() * way.y() - d.y() * way.x());
            if (along <= 0)
                continue;
            const double score = along + 2 * across; // straight on before off to the side
            if (!best || score < bestScore) {
                best = other;
                bestScore = score;
            }
        }
        if (best) {
            best->setFocus(Qt::OtherFocusReason);
            best->ensureVisible();
        }
        event->accept();
    }
};

} // namespace

WaitGraphPage::WaitGraphPage(QWidget *parent)
    : StatePage(parent)
    , m_summary(new QLabel(this))
    , m_find(new QLineEdit(this))
    , m_scene(new QGraphicsScene(this))
    , m_view(new QGraphicsView(m_scene, this))
{
    setObjectName(QStringLiteral("waitGraphPage"));
    m_summary->setObjectName(QStringLiteral("waitGraphSummary"));
    m_summary->setWordWrap(true);
    m_summary->setMargin(6);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard);
    m_view->setObjectName(QStringLiteral("waitGraph"));
    m_view->setAccessibleName(tr("Wait-for graph"));
    m_view->setFocusPolicy(Qt::StrongFocus);
    m_view->setRenderHint(QPainter::Antialiasing);
    m_view->setDragMode(QGraphicsView::ScrollHandDrag);
    m_view->setAlignment(Qt::AlignLeft | Qt::AlignTop);
    m_find->setObjectName(QStringLiteral("waitGraphFind"));
    m_find->setPlaceholderText(tr("Find an agent"));
    m_find->setClearButtonEnabled(true);
    m_find->setAccessibleName(tr("Find an agent in the wait-for graph"));
    connect(m_find, &QLineEdit::textEdited, this, [this](const QString &text) {
        if (!text.isEmpty())
            find(text);
    });
    auto *column = new QVBoxLayout(this);
    column->setContentsMargins(0, 0, 0, 0);
    auto *bar = new QHBoxLayout;
    bar->setContentsMargins(6, 0, 6, 0);
    bar->addWidget(m_summary, 1);
    bar->addWidget(m_find);
    column->addLayout(bar);
    column->addWidget(m_view, 1);
    m_view->installEventFilter(this);
    m_view->viewport()->installEventFilter(this);
    const std::pair<QKeySequence, double> zooms[] = {{QKeySequence::ZoomIn, 1.25},
                                                     {QKeySequence::ZoomOut, 0.8},
                                                     {QKeySequence(tr("Ctrl+0")), 0}};
    for (const auto &[keys, factor] : zooms) {
        auto *action = new QAction(this);
        action->setShortcut(keys);
        action->setShortcutContext(Qt::WidgetWithChildrenShortcut);
        connect(action, &QAction::triggered, this, [this, factor = factor] {
            if (factor > 0) {
                zoomBy(factor);
            } else {
                m_userZoomed = false;
                redraw();
            }
        });
        addAction(action);
    }
    connect(m_scene, &QGraphicsScene::selectionChanged, this, [this] {
        const QList<QGraphicsItem *> selected = m_scene->selectedItems();
        if (selected.isEmpty())
            return;
        const QString did = selected.first()->data(0).toString();
        if (const WaitGraphModel::Node *n = m_graph.node(did); n && n->crowd())
            return openCrowd(did, true); // a click opens a crowd
        emit agentSelected(did);
    });
}

double WaitGraphPage::zoom() const
{
    return m_view->transform().m11();
}

void WaitGraphPage::zoomBy(double factor)
{
    const double to = std::clamp(zoom() * factor, 0.1, 3.0);
    m_userZoomed = true;
    m_view->setTransformationAnchor(QGraphicsView::AnchorUnderMouse);
    m_view->setTransform(QTransform::fromScale(to, to));
}

void WaitGraphPage::openCrowd(const QString &key, bool open)
{
    m_graph.expand(key, open);
    if (state())
        m_graph.update(*state());
    redraw();
}

void WaitGraphPage::select(const QString &did)
{
    for (QGraphicsItem *item : m_scene->items()) {
        if (item->data(0).toString() == did && (item->flags() & QGraphicsItem::ItemIsSelectable)) {
            m_scene->clearSelection();
            item->setSelected(true);
            m_view->centerOn(item);
            return;
        }
    }
}

bool WaitGraphPage::find(const QString &text)
{
    QString match;
    for (const WaitGraphModel::Node &n : m_graph.nodes()) {
        for (const QString &did : n.crowd() ? n.members : QStringList{n.did}) {
            if (did.contains(text, Qt::CaseInsensitive)) {
                match = did;
                break;
            }
        }
        if (!match.isEmpty())
            break;
    }
    if (match.isEmpty())
        return false;
    if (const WaitGraphModel::Node *n = m_graph.nodeOf(match); n && n->crowd())
        openCrowd(n->did, true);
    select(match);
    return true;
}

void WaitGraphPage::refresh(const ConsoleState &state)
{
    if (m_graph.update(state) || !m_drawn)
        redraw();
}

QString WaitGraphPage::summary() const
{
    int parked = 0;
    for (const WaitGraphModel::Edge &e : m_graph.edges())
        parked += e.parked ? 1 : 0;
    QStringList parts;
    if (m_graph.edges().empty())
        parts << tr("Nobody waits for anybody.");
    else
        parts << tr("%1 waiting for %2 (%3 parked, %4 refused and still wanting).")
                     .arg(m_graph.edges().size() == 1 ? tr("1 arrow")
                                                      : tr("%1 arrows").arg(m_graph.edges().size()))
                     .arg(m_graph.nodes().size() == 1 ? tr("1 agent")
                                                      : tr("%1 agents").arg(m_graph.nodes().size()))
                     .arg(parked)
                     .arg(int(m_graph.edges().size()) - parked);
    for (const QString &path : m_graph.livePaths())
        parts << tr("Live deadlock: %1.").arg(path);
    if (!m_graph.refusedPath().isEmpty())
        parts << tr("Deadlock refused in the last minute: %1.").arg(m_graph.refusedPath());
    if (m_graph.hiddenNodes() > 0)
        parts << tr("%1 more agents not drawn.").arg(m_graph.hiddenNodes());
    return parts.join(QLatin1Char(' '));
}

bool WaitGraphPage::eventFilter(QObject *watched, QEvent *event)
{
    if (watched == m_view->viewport() && event->type() == QEvent::Wheel) {
        auto *wheel = static_cast<QWheelEvent *>(event);
        if (wheel->modifiers() & Qt::ControlModifier) {
            zoomBy(wheel->angleDelta().y() > 0 ? 1.15 : 1 / 1.15);
            return true;
        }
    }
    // Reached by the keyboard: the selected box, or the first, takes the focus.
    if (watched == m_view && event->type() == QEvent::FocusIn && !m_scene->focusItem()) {
        const QList<QGraphicsItem *> selected = m_scene->selectedItems();
        QGraphicsItem *first = selected.isEmpty() ? nullptr : selected.first();
        for (QGraphicsItem *item : m_scene->items(Qt::AscendingOrder)) {
            if (!first && (item->flags() & QGraphicsItem::ItemIsFocusable))
                first = item;
        }
        if (first)
            first->setFocus(Qt::TabFocusReason);
    }
    return QWidget::eventFilter(watched, event);
}

void WaitGraphPage::changeEvent(QEvent *event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange)
        redraw();
}

void WaitGraphPage::redraw()
{
    m_drawn = true;
    const QSignalBlocker quiet(m_scene); // clearing is not the operator deselecting
    m_scene->clear();
    for (const WaitGraphModel::Node &n : m_graph.nodes())
        drawNode(n);
    for (const WaitGraphModel::Edge &e : m_graph.edges())
        drawEdge(e);
    const QRectF bounds = m_scene->itemsBoundingRect().adjusted(-24, -24, 24, 24);
    m_scene->setSceneRect(bounds);
    if (!m_userZoomed) {
        // A crowd is shrunk to fit (down to a third), a few boxes are drawn full size.
        const QSize room = m_view->viewport()->size();
        const double scale = std::clamp(std::min(room.width() / std::max(1.0, bounds.width()),
                                                 room.height() / std::max(1.0, bounds.height())),
                                        0.35, 1.0);
        m_view->setTransform(QTransform::fromScale(scale, scale));
    }
    const QString text = summary();
    m_summary->setText(text);
    m_view->setAccessibleDescription(text);
}

void WaitGraphPage::drawNode(const WaitGraphModel::Node &n)
{
    const QPalette pal = palette();
    const bool red = n.mark != WaitGraphModel::Mark::None;
    QPainterPath outline;
    outline.addRoundedRect(QRectF(-kBoxWidth / 2, -kBoxHeight / 2, kBoxWidth, kBoxHeight), 8, 8);
    auto *box = new AgentBox(outline);
    QPen pen(red ? kRed : pal.color(QPalette::Mid), red ? 2.5 : 1.2);
    if (n.crowd())
        pen.setStyle(Qt::DashLine); // many agents behind one box
    box->setPen(pen);
    box->setBrush(pal.brush(n.crowd() ? QPalette::AlternateBase : QPalette::Base));
    m_scene->addItem(box);
    box->setPos(n.pos);
    box->setZValue(1);
    box->setData(0, n.did);
    box->setFlags(QGraphicsItem::ItemIsSelectable | QGraphicsItem::ItemIsFocusable);
    QString title = elided(n.did, 30);
    QString detail = tr("holds nothing");
    if (n.crowd()) {
        title = tr("%1 agents").arg(n.members.size());
        detail = tr("waiting: click to show each");
        QStringList shown = n.members.mid(0, 20);
        if (n.members.size() > 20)
            shown << tr("and %1 more").arg(n.members.size() - 20);
        box->setToolTip(tr("%1 agents wait for the same resource:\n%2")
                            .arg(n.members.size())
                            .arg(shown.join(QLatin1Char('\n'))));
    } else {
        box->setToolTip(n.holds.isEmpty()
                            ? tr("%1 holds nothing").arg(n.did)
                            : tr("%1 holds:\n%2").arg(n.did, n.holds.join(QLatin1Char('\n'))));
        if (!n.holds.isEmpty()) {
            detail = elided(n.holds.front(), 30);
            if (n.holds.size() > 1)
                detail += tr(" and %1 more").arg(n.holds.size() - 1);
        }
    }
    auto *name = new QGraphicsSimpleTextItem(title, box);
    QFont bold = font();
    bold.setBold(true);
    name->setFont(bold);
    name->setBrush(pal.color(QPalette::Text));
    name->setPos(-kBoxWidth / 2 + 8, -kBoxHeight / 2 + 8);
    auto *holds = new QGraphicsSimpleTextItem(detail, box);
    holds->setBrush(pal.color(QPalette::PlaceholderText));
    holds->setPos(-kBoxWidth / 2 + 8, -kBoxHeight / 2 + 34);
}

void WaitGraphPage::drawEdge(const WaitGraphModel::Edge &e)
{
    const WaitGraphModel::Node *from = m_graph.node(e.from);
    const WaitGraphModel::Node *to = m_graph.node(e.to);
    if (!from || !to)
        return;
    // Two agents that wait for each other get their arrows side by side, not on one line: the
    // side is taken from the pair's own axis (same for both directions) and the arrow's way.
    const QLineF axis = e.from < e.to ? QLineF(from->pos, to->pos) : QLineF(to->pos, from->pos);
    const double length = std::max(1.0, axis.length());
    const QPointF normal =
        QPointF(-axis.dy() / length, axis.dx() / length) * (e.from < e.to ? 1.0 : -1.0);
    const QPointF shift = normal * 7.0;
    QPointF start = boxExit(from->pos + shift, to->pos + shift);
    QPointF end = boxExit(to->pos + shift, from->pos + shift);

    const bool red = e.mark != WaitGraphModel::Mark::None;
    QPen pen(red ? kRed : palette().color(QPalette::Text), red ? 2.5 : 1.4);
    pen.setStyle(e.refused ? Qt::DotLine : e.parked ? Qt::SolidLine : Qt::DashLine);
    QPainterPath path;
    QPointF towardEnd = start; // where the arrow head points from
    QPointF middle = (start + end) / 2 + normal * 12.0;
    if (std::abs(from->pos.x() - to->pos.x()) < 1) {
        // One column (a cycle's members, one under the other): down on the right, up on the
        // left, so the waits read as the loop they are.
        const double side = to->pos.y() > from->pos.y() ? 1.0 : -1.0;
        start = from->pos + QPointF(side * kBoxWidth / 2, 0);
        end = to->pos + QPointF(side * kBoxWidth / 2, 0);
        const QPointF bend((start.x() + end.x()) / 2 + side * 90, (start.y() + end.y()) / 2);
        path.moveTo(start);
        path.quadTo(bend, end);
        towardEnd = bend;
        middle = (start + end) / 4 + bend / 2;
    } else {
        path.moveTo(start);
        path.lineTo(end);
    }
    QLineF back(end, towardEnd);
    back.setLength(12);
    for (const double turn : {25.0, -25.0}) {
        QLineF wing = back;
        wing.setAngle(back.angle() + turn);
        path.moveTo(end);
        path.lineTo(wing.p2());
    }
    auto *arrow = m_scene->addPath(path, pen);
    const QString who = e.count > 1 ? tr("%1 agents").arg(e.count) : e.from;
    arrow->setToolTip(
        e.refused ? tr("%1 asked for %2, held by %3: refused, it would close the cycle")
                        .arg(who, e.resource, e.to)
        : e.parked
            ? (e.count > 1 ? tr("%1 wait for %2, held by %3") : tr("%1 waits for %2, held by %3"))
                  .arg(who, e.resource, e.to)
            : (e.count > 1 ? tr("%1 were refused %2, held by %3, and still want it")
                           : tr("%1 was refused %2, held by %3, and still wants it"))
                  .arg(who, e.resource, e.to));
    QString text = elided(e.resource, 34);
    if (e.count > 1)
        text += QStringLiteral(" \u00d7%1").arg(e.count);
    auto *label = new QGraphicsSimpleTextItem(text);
    label->setBrush(pen.color());
    const QRectF bounds = label->boundingRect();
    label->setPos(middle - QPointF(bounds.width() / 2, bounds.height() / 2));
    auto *plate = m_scene->addRect(bounds.translated(label->pos()).adjusted(-3, -1, 3, 1),
                                   Qt::NoPen, palette().brush(QPalette::Base));
    plate->setOpacity(0.85);
    plate->setZValue(2);
    label->setZValue(3);
    m_scene->addItem(label);
}
