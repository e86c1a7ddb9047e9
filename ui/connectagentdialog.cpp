#include "connectagentdialog.h"

#include "enginelink.h"

#include <QClipboard>
#include <QDialogButtonBox>
#include <QFontDatabase>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QVBoxLayout>

ConnectAgentDialog::ConnectAgentDialog(EngineLink *link, const QString &listenUrl, bool open,
                                       QWidget *parent)
    : QDialog(parent)
    , m_link(link)
    , m_url(listenUrl)
    , m_open(open)
    , m_did(new QLineEdit(QStringLiteral("did:agent:"), this))
    , m_mint(new QPushButton(open ? tr("Show configuration") : tr("Mint key"), this))
    , m_status(new QLabel(this))
{
    setWindowTitle(tr("Connect an agent"));
    setObjectName(QStringLiteral("connectAgentDialog"));
    m_did->setObjectName(QStringLiteral("did"));
    m_mint->setObjectName(QStringLiteral("mint"));
    m_mint->setDefault(true);
    m_status->setObjectName(QStringLiteral("status"));
    m_status->setWordWrap(true);

    auto *layout = new QVBoxLayout(this);
    auto *intro = new QLabel(
        open ? tr("This service runs --open: an agent names itself with an X-Agent-Id header. "
                  "Choose its DID:")
             : tr("Each agent gets its own key; the service keeps only its digest, so copy it "
                  "now. Choose the agent's DID:"),
        this);
    intro->setWordWrap(true);
    layout->addWidget(intro);
    auto *row = new QHBoxLayout;
    row->addWidget(m_did, 1);
    row->addWidget(m_mint);
    layout->addLayout(row);
    layout->addWidget(m_status);
    snippetBox(QStringLiteral("claude"), tr("Claude Code"), layout);
    snippetBox(QStringLiteral("json"), tr("MCP client configuration (JSON)"), layout);
    snippetBox(QStringLiteral("curl"), tr("REST, with curl"), layout);
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    layout->addWidget(buttons);

    connect(m_mint, &QPushButton::clicked, this, &ConnectAgentDialog::mint);
    connect(m_did, &QLineEdit::returnPressed, this, &ConnectAgentDialog::mint);
    connect(m_link, &EngineLink::keyMinted, this, &ConnectAgentDialog::onMinted);
    resize(720, 560);
}

QPlainTextEdit *ConnectAgentDialog::snippetBox(const QString &name, const QString &title,
                                               QVBoxLayout *layout)
{
    auto *head = new QHBoxLayout;
    head->addWidget(new QLabel(QStringLiteral("<b>%1</b>").arg(title), this), 1);
    auto *copy = new QPushButton(tr("Copy"), this);
    copy->setObjectName(name + QStringLiteral("Copy"));
    copy->setEnabled(false);
    head->addWidget(copy);
    layout->addLayout(head);
    auto *box = new QPlainTextEdit(this);
    box->setObjectName(name);
    box->setReadOnly(true);
    box->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    box->setMaximumHeight(box->fontMetrics().height() * 6);
    layout->addWidget(box);
    connect(copy, &QPushButton::clicked, this, [this, box, name] {
        QGuiApplication::clipboard()->setText(box->toPlainText());
        m_status->setText(tr("Copied the %1 snippet.").arg(name));
    });
    return box;
}

QString ConnectAgentDialog::snippet(const QString &name) const
{
    const auto *box = findChild<QPlainTextEdit *>(name);
    return box ? box->toPlainText() : QString();
}

void ConnectAgentDialog::mint()
{
    const QString did = m_did->text().trimmed();
    if (m_open)
        return showSnippets(did);
    m_mint->setEnabled(false);
    m_status->setText(tr("Minting a key for %1…").arg(did));
    m_link->mintKey(did);
}

void ConnectAgentDialog::onMinted(const QString &did, const QString &key, const QString &error)
{
    if (did != m_did->text().trimmed())
        return;
    m_mint->setEnabled(true);
    if (!error.isEmpty()) {
        m_status->setText(tr("No key minted: %1").arg(error));
        return;
    }
    m_key = key;
    showSnippets(did);
}

void ConnectAgentDialog::showSnippets(const QString &did)
{
    const QString mcp = m_url + QStringLiteral("/mcp");
    const QString name = m_open ? QStringLiteral("X-Agent-Id") : QStringLiteral("Authorization");
    const QString value = m_open ? did : QStringLiteral("Bearer ") + m_key;
    const QString header = name + QStringLiteral(": ") + value;
    findChild<QPlainTextEdit *>(QStringLiteral("claude"))->setPlainText(claudeCommand(mcp, header));
    findChild<QPlainTextEdit *>(QStringLiteral("json"))->setPlainText(jsonConfig(mcp, name, value));
    findChild<QPlainTextEdit *>(QStringLiteral("curl"))
        ->setPlainText(curlExample(m_url, m_open ? QString() : header, did));
    for (const char *n : {"claudeCopy", "jsonCopy", "curlCopy"})
        findChild<QPushButton *>(QLatin1String(n))->setEnabled(true);
    m_status->setText(m_open ? tr("Ready for %1.").arg(did)
                             : tr("Key minted for %1. It is shown only here, once.").arg(did));
}

QString ConnectAgentDialog::claudeCommand(const QString &url, const QString &header)
{
    return QStringLiteral("claude mcp add --transport http leasehold %1 --header \"%2\"")
        .arg(url, header);
}

QString ConnectAgentDialog::jsonConfig(const QString &url, const QString &headerName,
                                       const QString &headerValue)
{
    return QStringLiteral(
               "{\n  \"mcpServers\": {\n    \"leasehold\": {\n      \"type\": \"http\",\n"
               "      \"url\": \"%1\",\n      \"headers\": { \"%2\": \"%3\" }\n    }\n  }\n}")
        .arg(url, headerName, headerValue);
}

QString ConnectAgentDialog::curlExample(const QString &url, const QString &header,
                                        const QString &did)
{
    // Keyed: the key says who is asking. Open: the body names the agent.
    const QString who =
        header.isEmpty() ? QString() : QStringLiteral("  -H \"%1\" \\\n").arg(header);
    const QString actor =
        header.isEmpty() ? QStringLiteral("\"actorDid\":\"%1\",").arg(did) : QString();
    return QStringLiteral("curl -s -X POST %1/api/v1/acp/coordination/lease \\\n%2"
                          "  -H 'Content-Type: application/json' \\\n"
                          "  -d '{%3\"resource\":\"lock:deploy/production\",\"ttlMs\":60000}'")
        .arg(url, who, actor);
}
