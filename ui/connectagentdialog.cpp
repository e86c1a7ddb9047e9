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
#include <QTabWidget>
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
    // One tab per way in: what an agent volunteers (MCP, REST), and the guards in front of the
    // tools it already uses (its MCP servers, Claude Code's own editing tools, git).
    m_tabs = new QTabWidget(this);
    m_tabs->setObjectName(QStringLiteral("ways"));
    layout->addWidget(m_tabs, 1);
    snippetBox(QStringLiteral("run"), tr("Every write (leasehold run)"),
               tr("Starts the agent - any agent, a shell, a script - with the workspace behind "
                  "Leasehold's filesystem gate: a change to a file another agent holds is refused "
                  "whatever program makes it (sed -i, tee, a formatter), and the agent's own "
                  "changes take leases that end with the run. Linux, with /dev/fuse."));
    snippetBox(QStringLiteral("claude"), tr("Claude Code (MCP)"),
               tr("Adds Leasehold's lock tools to Claude Code. The agent asks before it edits."));
    snippetBox(QStringLiteral("hook"), tr("Coding agents' hooks"),
               tr("Guards a coding agent's own edit and shell tools (Claude Code, Codex, Gemini "
                  "CLI, Copilot CLI, Qwen Code, opencode): an edit of a file another agent holds "
                  "waits for it, and is denied naming the holder if the wait runs out. One line "
                  "in the project per agent; then start the agent with the key in its "
                  "environment."));
    snippetBox(QStringLiteral("guard"), tr("Guard an MCP server"),
               tr("Puts the lease layer in front of any MCP server the agent edits with (here "
                  "the official filesystem server): its writes are checked, and the lock tools "
                  "are added."));
    snippetBox(QStringLiteral("git"), tr("git guard"),
               tr("Refuses a commit or push that changes a file under another agent's lease. Run "
                  "once in the repository; LEASEHOLD_GUARD=off lets a person through."));
    snippetBox(QStringLiteral("json"), tr("MCP (JSON)"),
               tr("For clients configured with an mcpServers entry."));
    snippetBox(QStringLiteral("curl"), tr("REST"), tr("Any program, with curl."));
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    layout->addWidget(buttons);

    connect(m_mint, &QPushButton::clicked, this, &ConnectAgentDialog::mint);
    connect(m_did, &QLineEdit::returnPressed, this, &ConnectAgentDialog::mint);
    connect(m_link, &EngineLink::keyMinted, this, &ConnectAgentDialog::onMinted);
    resize(760, 520);
}

QPlainTextEdit *ConnectAgentDialog::snippetBox(const QString &name, const QString &title,
                                               const QString &what)
{
    auto *page = new QWidget(m_tabs);
    auto *layout = new QVBoxLayout(page);
    auto *head = new QHBoxLayout;
    auto *explain = new QLabel(what, page);
    explain->setWordWrap(true);
    head->addWidget(explain, 1);
    auto *copy = new QPushButton(tr("Copy"), page);
    copy->setObjectName(name + QStringLiteral("Copy"));
    copy->setEnabled(false);
    copy->setAccessibleName(tr("Copy the %1 snippet").arg(title));
    head->addWidget(copy);
    layout->addLayout(head);
    auto *box = new QPlainTextEdit(page);
    box->setObjectName(name);
    box->setReadOnly(true);
    box->setAccessibleName(title);
    box->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    layout->addWidget(box, 1);
    m_tabs->addTab(page, title);
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
    // The guards read the key (or, --open, the agent) from the agent's environment, never from
    // a file others share.
    const QString identity = m_open ? QStringLiteral("LEASEHOLD_AGENT=%1").arg(did)
                                    : QStringLiteral("LEASEHOLD_KEY=%1").arg(m_key);
    findChild<QPlainTextEdit *>(QStringLiteral("run"))->setPlainText(runCommand(m_url, identity));
    findChild<QPlainTextEdit *>(QStringLiteral("hook"))
        ->setPlainText(hookCommands(m_url, identity));
    findChild<QPlainTextEdit *>(QStringLiteral("guard"))
        ->setPlainText(guardCommand(m_url, identity));
    findChild<QPlainTextEdit *>(QStringLiteral("git"))->setPlainText(gitCommands(m_url, identity));
    for (const char *n :
         {"runCopy", "claudeCopy", "jsonCopy", "curlCopy", "hookCopy", "guardCopy", "gitCopy"})
        findChild<QPushButton *>(QLatin1String(n))->setEnabled(true);
    m_status->setText(m_open ? tr("Ready for %1.").arg(did)
                             : tr("Key minted for %1. It is shown only here, once.").arg(did));
}

QString ConnectAgentDialog::claudeCommand(const QString &url, const QString &header)
{
    return QStringLiteral("claude mcp add --transport http leasehold %1 --header \"%2\"")
        .arg(url, header);
}

QString ConnectAgentDialog::runCommand(const QString &url, const QString &identity)
{
    return QStringLiteral("# in the project folder (or --root DIR), then your agent's command:\n"
                          "%1 leasehold run --url %2 -- claude\n"
                          "# inside the run, which writes were refused and who holds them:\n"
                          "leasehold why")
        .arg(identity, url);
}

QString ConnectAgentDialog::hookCommands(const QString &url, const QString &identity)
{
    // One line per agent, and how to start it as this agent (install-hooks prints the rest).
    static const struct
    {
        const char *name;
        const char *program;
        const char *then;
    } agents[] = {
        {"claude-code", "claude", ""},
        {"codex", "codex", "  # trust the project and its hooks when it asks"},
        {"gemini", "gemini", "  # trust the folder when it asks"},
        {"copilot", "copilot", "  # trust the folder when it asks"},
        {"qwen", "qwen", ""},
        {"opencode", "opencode", ""},
    };
    QString text = QStringLiteral("# in the project folder, the line for your agent:\n");
    for (const auto &a : agents)
        text += QStringLiteral("leasehold ctl install-hooks %1 --url %2\n")
                    .arg(QLatin1String(a.name), url);
    text += QStringLiteral("# then start the agent as this agent:\n");
    for (const auto &a : agents)
        text += QStringLiteral("%1 %2%3\n")
                    .arg(identity, QLatin1String(a.program), QLatin1String(a.then));
    return text.trimmed();
}

QString ConnectAgentDialog::guardCommand(const QString &url, const QString &identity)
{
    return QStringLiteral("# in the project folder:\n"
                          "claude mcp add filesystem -e %1 -- \\\n"
                          "  leasehold guard mcp --url %2 --root \"$PWD\" -- \\\n"
                          "  npx -y @modelcontextprotocol/server-filesystem \"$PWD\"")
        .arg(identity, url);
}

QString ConnectAgentDialog::gitCommands(const QString &url, const QString &identity)
{
    return QStringLiteral("# once, in the repository (linked worktrees share it):\n"
                          "leasehold guard git install --url %1\n"
                          "# the agent commits as itself:\n"
                          "%2 git commit ...")
        .arg(url, identity);
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
