// The console in cluster mode (docs/cluster.md): a line under the banner naming this
// instance's role and the leader; on a standby the console is read-only, since its engine is
// not the one agents use (they are sent to the leader), so every lever is off and says why.

#include "agentdetailpage.h"
#include "mainwindow.h"

#include <QAction>
#include <QLabel>

using namespace leasehold;

void MainWindow::buildClusterLine()
{
    m_clusterLine = new QLabel(this);
    m_clusterLine->setObjectName(QStringLiteral("clusterLine"));
    m_clusterLine->setAccessibleName(tr("Cluster role and leader"));
    m_clusterLine->setWordWrap(true);
    m_clusterLine->setMargin(6);
    m_clusterLine->setAutoFillBackground(true);
    m_clusterLine->setTextInteractionFlags(Qt::TextSelectableByMouse |
                                           Qt::TextSelectableByKeyboard);
    m_clusterLine->hide();
}

QString MainWindow::clusterText() const
{
    return m_clusterLine && !m_clusterLine->isHidden() ? m_clusterLine->text() : QString();
}

void MainWindow::showCluster(const ClusterFacts &c)
{
    QString text;
    QColor tone;
    const QString leader = QString::fromStdString(c.leader);
    const QString members = QString::number(c.members.size());
    if (c.standby()) {
        text = leader.isEmpty()
                   ? tr("Standby: no leader is elected yet. This console is read-only; the "
                        "instance elected will have the fleet and the levers.")
                   : tr("Standby: the leader is %1 (%2 instances standing). Agents are sent "
                        "there; this console is read-only, and the leader's console has the "
                        "fleet and the levers.")
                         .arg(leader, members);
        tone = palette().color(QPalette::Highlight);
    } else if (c.role == "leader") {
        text = c.lapsed ? tr("Leader (term %1), but it cannot confirm its etcd session: no grant "
                             "is made until etcd answers.")
                              .arg(c.term)
                        : tr("Leader (term %1) of %2 instances standing.").arg(c.term).arg(members);
        tone = c.lapsed ? QColor(200, 60, 50) : QColor();
    }
    if (!c.problem.empty() && !text.isEmpty())
        text += tr(" The last look at etcd failed: %1.").arg(QString::fromStdString(c.problem));
    const bool readOnly = c.standby();
    if (readOnly != m_readOnly) {
        m_readOnly = readOnly;
        for (QAction *lever : std::as_const(m_levers)) {
            lever->setEnabled(!readOnly);
            lever->setStatusTip(readOnly ? tr("Read-only: a standby's console") : QString());
        }
        m_agentDetail->setReadOnly(readOnly);
    }
    if (text.isEmpty()) {
        m_clusterLine->hide();
        return;
    }
    if (m_clusterLine->text() != text)
        m_clusterLine->setText(text);
    QPalette p = palette();
    if (tone.isValid()) {
        p.setColor(QPalette::Window, tone);
        p.setColor(QPalette::WindowText, tone.lightness() > 140 ? Qt::black : Qt::white);
    }
    m_clusterLine->setPalette(p);
    m_clusterLine->show();
}
