#pragma once

// tst_gatefs's fixture: a gate in its own process (tst_gatefs_gate) over a temporary backing
// folder, the policy log it writes, and the shell this process runs commands with. The gate's
// process is the only one serving the mount, so nothing here can wait on itself.

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <signal.h>

#include <memory>

namespace gatefstest {

constexpr int kDeadlineMs = 10'000;

// One line of the test policy's log.
struct Event
{
    QByteArray kind, op, path, target;
    bool directory = false;
    quint64 handle = 0;
    int value = 0; // admit: the verdict; done: the error
};

bool isMounted(const QString &path);
QByteArray readAll(const QString &path);

// One gate process.
class Gate
{
public:
    ~Gate() { stop(); }

    bool start(const QString &backing, const QString &mount, const QString &log, const QString &bus,
               const QStringList &denied, QString *why, const QStringList &extra = {})
    {
        m_mount = mount;
        QStringList args{"--backing", backing, "--mount", mount, "--log", log, "--bus", bus};
        args << extra;
        for (const QString &d : denied)
            args << "--deny" << d;
        m_process.setProcessChannelMode(QProcess::ForwardedErrorChannel);
        m_process.start(QStringLiteral(GATEFS_HELPER), args);
        QDeadlineTimer deadline(kDeadlineMs);
        QByteArray out;
        while (!out.contains('\n') && !deadline.hasExpired()) {
            if (!m_process.waitForReadyRead(static_cast<int>(deadline.remainingTime())))
                break;
            out += m_process.readAll();
        }
        if (!out.startsWith("mounted")) {
            *why = QString::fromUtf8(out.trimmed());
            if (why->isEmpty())
                *why = QStringLiteral("the gate said nothing (exit %1)").arg(m_process.exitCode());
            m_process.kill();
            m_process.waitForFinished();
            return false;
        }
        return true;
    }
    qint64 pid() const { return m_process.processId(); }
    // SIGTERM: the gate's stop(); true if it exited cleanly.
    bool stop()
    {
        if (m_process.state() == QProcess::NotRunning)
            return true;
        ::kill(static_cast<pid_t>(m_process.processId()), SIGTERM);
        const bool clean = m_process.waitForFinished(kDeadlineMs) &&
                           m_process.exitStatus() == QProcess::NormalExit &&
                           m_process.exitCode() == 0;
        if (!clean) {
            m_process.kill();
            m_process.waitForFinished();
        }
        return clean;
    }
    void kill9()
    {
        ::kill(static_cast<pid_t>(m_process.processId()), SIGKILL);
        m_process.waitForFinished(kDeadlineMs);
    }
    int openFds() const
    {
        return static_cast<int>(QDir(QStringLiteral("/proc/%1/fd").arg(pid()))
                                    .entryList(QDir::NoDotAndDotDot | QDir::AllEntries)
                                    .size());
    }

private:
    QProcess m_process;
    QString m_mount;
};

// The paths the test policy refuses (and everything below them).
extern const QStringList kDenied;

class Fixture : public QObject
{
protected:
    QString back(const QString &rel) const { return m_backing + '/' + rel; }
    QString mnt(const QString &rel) const { return m_mount + '/' + rel; }
    static bool write(const QString &path, const QByteArray &bytes);
    // Runs `command` with sh in `where`: its exit code and merged output.
    static QPair<int, QByteArray> sh(const QString &command, const QString &where);
    QList<Event> events() const;
    bool startGate(Gate &gate, const QString &mount, QString *why = nullptr,
                   const QStringList &extra = {});
    // The gate over m_mount again, with `extra` arguments (handleMode(): zeroOpen off).
    bool restartGate(const QStringList &extra, QString *why);
    static QStringList handleMode() { return {QStringLiteral("--handles"), QStringLiteral("1")}; }
    // What a refused change must leave exactly as it was.
    QByteArray protectedState() const;
    // A fresh backing folder with the files the cases use, and a gate mounted over it.
    bool setUp(QString *why);
    void tearDown();

    // Cases of zero-open (GateFs::Options::zeroOpen), run by tst_gatefs's slots of the same name.
    void zeroOpenAsksWritesNotOpens();
    void everyWriteThroughAnOpenHeldFileIsRefused();
    void writesThroughOpenFilesLandAsThroughHandles();
    void outsideChangesReachReads();

    std::unique_ptr<QTemporaryDir> m_dir;
    QString m_backing, m_mount, m_log, m_bus;
    std::unique_ptr<Gate> m_gate;
};

} // namespace gatefstest
