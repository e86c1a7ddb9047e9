#include "agentrun.h"

#include <QDir>
#include <QTextStream>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

namespace {

constexpr int kSetupFailed = 125;

QTextStream &err()
{
    static QTextStream stream(stderr);
    return stream;
}

std::string errnoText()
{
    return std::strerror(errno);
}

bool writeFile(const char *path, const std::string &text)
{
    const int fd = ::open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    const bool ok = ::write(fd, text.data(), text.size()) == ssize_t(text.size());
    ::close(fd);
    return ok;
}

// A mount namespace whose mounts do not propagate back: as root directly; otherwise inside a
// new user namespace, mapping this user to root there (so the gate, which execs, keeps the
// capability to mount). An empty string on success, else what is missing.
std::string privateMounts()
{
    if (::geteuid() != 0) {
        const uid_t uid = ::geteuid();
        const gid_t gid = ::getegid();
        if (::unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0)
            return "this user may not make a user namespace (" + errnoText() +
                   "; see kernel.unprivileged_userns_clone, user.max_user_namespaces, or "
                   "AppArmor's restrict_unprivileged_userns); run as root, or serve a gated "
                   "view with `leasehold guard fs --mount DIR --root DIR`";
        writeFile("/proc/self/setgroups", "deny");
        if (!writeFile("/proc/self/uid_map", "0 " + std::to_string(uid) + " 1\n") ||
            !writeFile("/proc/self/gid_map", "0 " + std::to_string(gid) + " 1\n"))
            return "cannot map this user into its user namespace (" + errnoText() + ")";
    } else if (::unshare(CLONE_NEWNS) != 0) {
        return "cannot make a mount namespace (" + errnoText() + ")";
    }
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
        return "cannot make the mounts private (" + errnoText() + ")";
    return {};
}

std::vector<char *> argvOf(std::vector<std::string> &words)
{
    std::vector<char *> argv;
    for (std::string &w : words)
        argv.push_back(w.data());
    argv.push_back(nullptr);
    return argv;
}

// Waits for the gate's "ok" on `fd`; an empty string when it came, else what the gate said.
std::string awaitReady(int fd, int timeoutMs)
{
    std::string said;
    pollfd p{fd, POLLIN, 0};
    while (said.find('\n') == std::string::npos) {
        const int n = ::poll(&p, 1, timeoutMs);
        if (n == 0)
            return "the gate did not mount within " + std::to_string(timeoutMs / 1000) + " s";
        if (n < 0 && errno == EINTR)
            continue;
        char buf[512];
        const ssize_t got = ::read(fd, buf, sizeof buf);
        if (got <= 0)
            return said.empty() ? "the gate stopped before it mounted" : said;
        said.append(buf, std::size_t(got));
    }
    said.resize(said.find('\n'));
    return said == "ok" ? std::string() : said.substr(said.rfind("error: ", 0) == 0 ? 7 : 0);
}

int statusOf(int status)
{
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return 1;
}

} // namespace

int runAgent(const AgentRunSettings &settings)
{
    const std::string root = settings.root.toStdString();
    const std::string cwd = QDir::currentPath().toStdString();
    if (const std::string missing = privateMounts(); !missing.empty()) {
        err() << "leasehold run: " << QString::fromStdString(missing) << "\n";
        return kSetupFailed;
    }
    // The real folder, opened before the gate hides it; only the gate gets it.
    const int backing = ::open(root.c_str(), O_PATH | O_DIRECTORY);
    if (backing < 0) {
        err() << "leasehold run: cannot open " << settings.root << ": "
              << QString::fromStdString(errnoText()) << "\n";
        return kSetupFailed;
    }
    // Nothing here keeps the real folder as its working directory either.
    if (::chdir("/") != 0)
        return kSetupFailed;
    int ready[2];
    if (::pipe2(ready, O_CLOEXEC) != 0)
        return kSetupFailed;

    // Signals are taken in turn below; the children start with the mask they would have had.
    sigset_t handled, old;
    sigemptyset(&handled);
    for (int s : {SIGCHLD, SIGINT, SIGQUIT, SIGTERM, SIGHUP})
        sigaddset(&handled, s);
    sigprocmask(SIG_BLOCK, &handled, &old);

    std::vector<std::string> gateArgs = {settings.binary.toStdString(),
                                         "guard",
                                         "fs",
                                         "--mount",
                                         root,
                                         "--backing-fd",
                                         std::to_string(backing),
                                         "--ready-fd",
                                         std::to_string(ready[1])};
    for (const QString &f : settings.gateFlags)
        gateArgs.push_back(f.toStdString());
    const pid_t gate = ::fork();
    if (gate == 0) {
        sigprocmask(SIG_SETMASK, &old, nullptr);
        ::setpgid(0, 0); // not in the terminal's foreground group: Ctrl-C is the command's
        ::fcntl(ready[1], F_SETFD, 0);
        for (const QString &e : settings.environment)
            ::putenv(::strdup(e.toLocal8Bit().constData()));
        std::vector<char *> argv = argvOf(gateArgs);
        ::execv(argv[0], argv.data());
        _exit(127);
    }
    ::close(ready[1]);
    ::close(backing);
    if (gate < 0) {
        err() << "leasehold run: cannot start the gate: " << QString::fromStdString(errnoText())
              << "\n";
        return kSetupFailed;
    }
    if (const std::string why = awaitReady(ready[0], settings.readyTimeoutMs); !why.empty()) {
        err() << "leasehold run: " << QString::fromStdString(why) << "\n";
        ::kill(gate, SIGTERM);
        ::waitpid(gate, nullptr, 0);
        return kSetupFailed;
    }
    ::close(ready[0]);

    std::vector<std::string> words;
    for (const QString &w : settings.command)
        words.push_back(w.toStdString());
    const pid_t child = ::fork();
    if (child == 0) {
        sigprocmask(SIG_SETMASK, &old, nullptr);
        // Into the working directory again: by path, so through the gate when it is below root.
        if (::chdir(cwd.c_str()) != 0) {
            std::fprintf(stderr, "leasehold run: cannot enter %s: %s\n", cwd.c_str(),
                         std::strerror(errno));
            _exit(126);
        }
        std::vector<char *> argv = argvOf(words);
        ::execvp(argv[0], argv.data());
        std::fprintf(stderr, "leasehold run: cannot run %s: %s\n", argv[0], std::strerror(errno));
        _exit(errno == ENOENT ? 127 : 126);
    }
    if (child < 0) {
        ::kill(gate, SIGTERM);
        ::waitpid(gate, nullptr, 0);
        return kSetupFailed;
    }

    bool gateAlive = true;
    int result = 0;
    for (;;) {
        siginfo_t info{};
        if (::sigwaitinfo(&handled, &info) < 0)
            continue;
        if (info.si_signo != SIGCHLD) {
            // Ctrl-C from the terminal reaches the command by itself; what was sent to this
            // process (kill, a supervisor) is passed on.
            if (info.si_code <= 0 || info.si_signo == SIGTERM || info.si_signo == SIGHUP)
                ::kill(child, info.si_signo);
            continue;
        }
        int status = 0;
        pid_t done;
        bool childDone = false;
        while ((done = ::waitpid(-1, &status, WNOHANG)) > 0) {
            if (done == gate) {
                gateAlive = false;
                err() << "leasehold run: the gate stopped (" << statusOf(status)
                      << "); changes below " << settings.root << " fail from now on\n";
                err().flush();
                if (settings.releaseRun)
                    settings.releaseRun();
            } else if (done == child) {
                childDone = true;
                result = statusOf(status);
            }
        }
        if (childDone)
            break;
    }
    if (gateAlive) {
        ::kill(gate, SIGTERM); // it unmounts and releases the run's leases
        sigset_t exits;
        sigemptyset(&exits);
        sigaddset(&exits, SIGCHLD);
        const timespec bound{10, 0};
        while (gateAlive) {
            if (::waitpid(gate, nullptr, WNOHANG) == gate)
                gateAlive = false;
            else if (::sigtimedwait(&exits, nullptr, &bound) < 0 && errno == EAGAIN)
                break; // ten quiet seconds: it is stuck
        }
        if (gateAlive) {
            ::kill(gate, SIGKILL);
            ::waitpid(gate, nullptr, 0);
            if (settings.releaseRun)
                settings.releaseRun();
        }
    }
    sigprocmask(SIG_SETMASK, &old, nullptr);
    return result;
}
