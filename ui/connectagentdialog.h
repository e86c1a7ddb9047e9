#pragma once

#include <QDialog>

class EngineLink;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;

// "Connect an agent": mints a key for a DID (or, with --open, none is needed) and shows
// ready-to-paste configuration for each way in - `leasehold run` (the filesystem gate), Claude
// Code's `claude mcp add`, the coding agents' hooks (one `install-hooks` line per agent), the guard
// in front of an MCP server, the git guard, a generic JSON mcpServers entry and a curl request -
// each on its tab with a copy button. The key is shown only here, once; the service keeps only its
// digest.
//
// Thread: the UI thread.
class ConnectAgentDialog : public QDialog
{
    Q_OBJECT

public:
    ConnectAgentDialog(EngineLink *link, const QString &listenUrl, bool open,
                       QWidget *parent = nullptr);

    QString key() const { return m_key; }
    // "run", "claude", "hook", "guard", "git", "json", "curl"
    QString snippet(const QString &name) const;

    static QString claudeCommand(const QString &url, const QString &header);
    static QString jsonConfig(const QString &url, const QString &headerName,
                              const QString &headerValue);
    static QString curlExample(const QString &url, const QString &header, const QString &did);
    // `identity`: "LEASEHOLD_KEY=<key>" (or, --open, "LEASEHOLD_AGENT=<did>").
    static QString runCommand(const QString &url, const QString &identity);
    static QString hookCommands(const QString &url, const QString &identity);
    static QString guardCommand(const QString &url, const QString &identity);
    static QString gitCommands(const QString &url, const QString &identity);

private:
    void mint();
    void onMinted(const QString &did, const QString &key, const QString &error);
    void showSnippets(const QString &did);
    QPlainTextEdit *snippetBox(const QString &name, const QString &title, const QString &what);

    EngineLink *m_link;
    QString m_url;
    bool m_open;
    QString m_key;
    QLineEdit *m_did;
    QPushButton *m_mint;
    QLabel *m_status;
    class QTabWidget *m_tabs = nullptr;
};
