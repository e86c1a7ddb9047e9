#include "leasegate.h"

#include <cerrno>
#include <chrono>
#include <mutex>
#include <variant>

namespace leasehold::fsgate {

namespace {

std::int64_t wallMs()
{
    using namespace std::chrono;
    return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

// The changes that make or change a file, and so take an implicit lease on it.
bool makesFile(ChangeOp op)
{
    switch (op) {
    case ChangeOp::Open:
    case ChangeOp::Truncate:
    case ChangeOp::WriteData:
    case ChangeOp::Create:
    case ChangeOp::Symlink:
    case ChangeOp::SetAttr:
    case ChangeOp::Xattr:
        return true;
    default:
        return false;
    }
}

// git's own files (.git/index, refs, objects) change under every git command of every agent:
// an implicit lease there would refuse the next agent's `git status` for a TTL. They are
// judged against explicit leases like any name, but take none of their own.
bool insideGit(const std::string &path)
{
    return path == ".git" || path.rfind(".git/", 0) == 0 ||
           path.find("/.git/") != std::string::npos ||
           (path.size() > 5 && path.compare(path.size() - 5, 5, "/.git") == 0);
}

} // namespace

LeaseGate::LeaseGate(LeaseView &view, GateService &service, RefusalLog &log, Options options)
    : m_view(view)
    , m_service(service)
    , m_log(log)
    , m_options(options)
{}

std::int64_t LeaseGate::steadyMs()
{
    using namespace std::chrono;
    return duration_cast<milliseconds>(steady_clock::now().time_since_epoch()).count();
}

void LeaseGate::setFresh(bool fresh)
{
    if (fresh) {
        m_staleSince = 0;
    } else {
        std::int64_t expected = 0;
        m_staleSince.compare_exchange_strong(expected, steadyMs());
    }
}

leasehold::ResourceName LeaseGate::nameOf(const std::string &path)
{
    static const leasehold::ResourceParser parser;
    const leasehold::ParsedName parsed =
        path.empty() ? parser.parse("fs:.") : parser.parseFilePath(path);
    if (const auto *name = std::get_if<leasehold::ResourceName>(&parsed))
        return *name;
    return std::get<leasehold::ResourceName>(parser.parse("fs:."));
}

int LeaseGate::refuse(const Change &change, const std::string &path, const std::string &reason,
                      const LeaseView::Lease *blocker)
{
    Refusal r;
    r.at = wallMs();
    r.op = std::string(changeOpName(change.op));
    r.path = path;
    r.resource = nameOf(path).canonical();
    r.reason = reason;
    r.pid = change.pid;
    r.command = change.command;
    {
        // A program that retries the same write in a loop is told each time, logged once a
        // second.
        std::lock_guard lock(m_lastLock);
        const std::string key = r.op + '\n' + change.path + '\n' + change.target + '\n' + path +
                                '\n' + std::to_string(r.pid) + '\n' + reason;
        if (key == m_lastKey && r.at - m_lastAt < 1000)
            return EACCES;
        m_lastKey = key;
        m_lastAt = r.at;
    }
    if (blocker) {
        r.holder = blocker->holder;
        r.heldResource = blocker->name.canonical();
        r.leaseId = blocker->leaseId;
        r.grantedAt = blocker->grantedAt;
        r.expiresAt = blocker->expiresAt;
    }
    m_log.append(r);
    if (blocker)
        m_service.refused(r);
    return EACCES;
}

int LeaseGate::judge(const Change &change, const std::string &path, bool subtree, bool *covered)
{
    const LeaseView::Verdict verdict = m_view.judge(nameOf(path), subtree);
    if (verdict.blocker)
        return refuse(change, path, "lease_held", &*verdict.blocker);
    if (covered)
        *covered = verdict.ownCover;
    return 0;
}

int LeaseGate::admit(const Change &change)
{
    if (const std::int64_t since = m_staleSince.load();
        since != 0 && steadyMs() - since > m_options.staleAfterMs)
        return refuse(change, change.path, "unreachable", nullptr);
    switch (change.op) {
    case ChangeOp::Rmdir:
        return judge(change, change.path, true, nullptr);
    case ChangeOp::Rename:
    case ChangeOp::Exchange:
        if (const int no = judge(change, change.path, change.directory, nullptr))
            return no;
        return judge(change, change.target,
                     change.targetDirectory || (change.op == ChangeOp::Rename && change.directory),
                     nullptr);
    case ChangeOp::Link: // a new name for a file: both the file and the name must be free
        if (const int no = judge(change, change.path, false, nullptr))
            return no;
        return judge(change, change.target, false, nullptr);
    default:
        return judge(change, change.path, false, nullptr);
    }
}

void LeaseGate::done(const Change &change, int error)
{
    if (error != 0 || !m_options.implicit)
        return;
    // Asked again from memory: a lease the watch brought meanwhile may cover it now.
    auto covered = [&](const std::string &path) {
        return m_view.judge(nameOf(path), false).ownCover;
    };
    auto changed = [&](const std::string &path, std::uint64_t handle) {
        if (!insideGit(path))
            m_service.changed(nameOf(path).canonical(), handle, covered(path));
    };
    switch (change.op) {
    case ChangeOp::Unlink:
        m_service.removed(nameOf(change.path).canonical());
        return;
    case ChangeOp::Rename:
        // An editor's temporary file renamed onto the file: the claim moves with it.
        if (!change.directory) {
            m_service.removed(nameOf(change.path).canonical());
            changed(change.target, 0);
        }
        return;
    case ChangeOp::Exchange:
        if (!change.directory)
            changed(change.path, 0);
        if (!change.targetDirectory)
            changed(change.target, 0);
        return;
    case ChangeOp::Link:
        changed(change.target, 0);
        return;
    default:
        if (makesFile(change.op) && !change.directory)
            changed(change.path, change.handle);
        return;
    }
}

void LeaseGate::closed(std::uint64_t handle)
{
    m_service.closed(handle);
}

} // namespace leasehold::fsgate
