#include "refusallog.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <fcntl.h>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

namespace leasehold::fsgate {

using nlohmann::json;

RefusalLog::RefusalLog(std::string path, std::size_t maxBytes)
    : m_path(std::move(path))
    , m_maxBytes(maxBytes)
{
    if (!m_path.empty())
        m_fd = ::open(m_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
}

RefusalLog::~RefusalLog()
{
    if (m_fd >= 0)
        ::close(m_fd);
}

std::string RefusalLog::toLine(const Refusal &r)
{
    json j = {{"at", r.at},         {"op", r.op},   {"path", r.path},      {"resource", r.resource},
              {"reason", r.reason}, {"pid", r.pid}, {"command", r.command}};
    if (!r.holder.empty()) {
        j["holder"] = r.holder;
        j["heldResource"] = r.heldResource;
        j["leaseId"] = r.leaseId;
        j["grantedAt"] = r.grantedAt;
        j["expiresAt"] = r.expiresAt;
    }
    return j.dump() + '\n';
}

bool RefusalLog::fromLine(const std::string &line, Refusal *r)
{
    const json j = json::parse(line, nullptr, false);
    if (!j.is_object() || !j.contains("at") || !j.contains("path"))
        return false;
    try {
        r->at = j.value("at", std::int64_t(0));
        r->op = j.value("op", "");
        r->path = j.value("path", "");
        r->resource = j.value("resource", "");
        r->reason = j.value("reason", "");
        r->holder = j.value("holder", "");
        r->heldResource = j.value("heldResource", "");
        r->leaseId = j.value("leaseId", "");
        r->grantedAt = j.value("grantedAt", std::int64_t(0));
        r->expiresAt = j.value("expiresAt", std::int64_t(0));
        r->pid = j.value("pid", 0);
        r->command = j.value("command", "");
    } catch (const json::exception &) {
        return false; // a field of the wrong type: not one of ours
    }
    return true;
}

void RefusalLog::append(const Refusal &refusal)
{
    if (m_fd < 0)
        return;
    const std::string line = toLine(refusal);
    std::lock_guard lock(m_lock);
    struct stat st
    {};
    if (::fstat(m_fd, &st) == 0 && std::size_t(st.st_size) + line.size() > m_maxBytes) {
        // Keep the newer half: read it, then write it back from the start.
        std::vector<Refusal> kept = read(m_path);
        kept.erase(kept.begin(), kept.begin() + std::ptrdiff_t(kept.size() / 2));
        if (::ftruncate(m_fd, 0) == 0) {
            for (const Refusal &r : kept) {
                const std::string l = toLine(r);
                [[maybe_unused]] const ssize_t n = ::write(m_fd, l.data(), l.size());
            }
        }
    }
    // One write of a whole line: readers never see half of one.
    [[maybe_unused]] const ssize_t n = ::write(m_fd, line.data(), line.size());
}

std::vector<Refusal> RefusalLog::read(const std::string &path, std::int64_t since)
{
    std::vector<Refusal> out;
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
        Refusal r;
        if (fromLine(line, &r) && r.at >= since)
            out.push_back(std::move(r));
    }
    return out;
}

} // namespace leasehold::fsgate
