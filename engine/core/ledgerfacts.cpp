#include "ledgerfacts.h"

#include <cstring>
#include <type_traits>

namespace leasehold {

namespace {

constexpr char kFormat = 1;

std::size_t textSize(std::string_view s)
{
    return sizeof(std::uint32_t) + s.size();
}

class StringWriter
{
public:
    explicit StringWriter(std::string &out)
        : m_out(out)
    {}
    template<class T> StringWriter &put(T value)
    {
        static_assert(std::is_trivially_copyable_v<T>);
        m_out.append(reinterpret_cast<const char *>(&value), sizeof value);
        return *this;
    }
    StringWriter &text(std::string_view s)
    {
        put(static_cast<std::uint32_t>(s.size()));
        m_out.append(s);
        return *this;
    }

private:
    std::string &m_out;
};

// Reads bytes it does not trust: past the end it stops, yields zeros and remembers the damage.
class CheckedReader
{
public:
    explicit CheckedReader(std::string_view bytes)
        : m_rest(bytes)
    {}
    template<class T> T get()
    {
        static_assert(std::is_trivially_copyable_v<T>);
        T value{};
        if (m_rest.size() < sizeof value) {
            m_ok = false;
            m_rest = {};
            return value;
        }
        std::memcpy(&value, m_rest.data(), sizeof value);
        m_rest.remove_prefix(sizeof value);
        return value;
    }
    std::string text()
    {
        const auto size = get<std::uint32_t>();
        if (size > m_rest.size()) {
            m_ok = false;
            m_rest = {};
            return {};
        }
        std::string out(m_rest.substr(0, size));
        m_rest.remove_prefix(size);
        return out;
    }
    bool ok() const { return m_ok; }
    bool atEnd() const { return m_rest.empty(); }

private:
    std::string_view m_rest;
    bool m_ok = true;
};

} // namespace

namespace facts {

std::uint16_t maskOf(const EventFacts &f)
{
    std::uint16_t m = 0;
    m |= f.op.empty() ? 0 : Op;
    m |= f.mode == Mode::Write ? 0 : ModeField;
    m |= f.waitedMs == -1 ? 0 : Waited;
    m |= f.holder.empty() ? 0 : Holder;
    m |= f.cycle.empty() ? 0 : Cycle;
    m |= f.by.empty() ? 0 : By;
    m |= f.whileDown ? WhileDown : 0;
    m |= f.target.empty() ? 0 : Target;
    m |= f.released == -1 ? 0 : ReleasedCount;
    m |= f.suspended ? Suspended : 0;
    m |= f.paused ? Paused : 0;
    m |= f.pinId.empty() ? 0 : PinId;
    m |= f.before.empty() ? 0 : Before;
    m |= f.after.empty() ? 0 : After;
    m |= f.to.empty() ? 0 : To;
    m |= extendedMaskOf(f) == 0 ? 0 : Extended;
    return m;
}

std::uint16_t extendedMaskOf(const EventFacts &f)
{
    std::uint16_t m = 0;
    m |= f.via.empty() ? 0 : ViaField;
    m |= f.pid == -1 ? 0 : Pid;
    m |= f.command.empty() ? 0 : Command;
    m |= f.heldBackMs == 0 ? 0 : HeldBack;
    m |= f.requestId.empty() ? 0 : RequestId;
    m |= f.urgency.empty() ? 0 : UrgencyField;
    m |= f.deadlineAt == 0 ? 0 : DeadlineAt;
    m |= f.requester.empty() ? 0 : Requester;
    return m;
}

} // namespace facts

std::size_t encodedFactsSize(const EventFacts &f)
{
    using namespace facts;
    const std::uint16_t mask = maskOf(f);
    std::size_t n = sizeof mask;
    n += mask & Op ? textSize(f.op) : 0;
    n += mask & ModeField ? 1 : 0;
    n += mask & Waited ? 8 : 0;
    n += mask & Holder ? textSize(f.holder) : 0;
    if (mask & Cycle) {
        n += sizeof(std::uint32_t);
        for (const CycleStep &s : f.cycle)
            n += textSize(s.agent) + textSize(s.resource);
    }
    n += mask & By ? textSize(f.by) : 0;
    n += mask & Target ? textSize(f.target) : 0;
    n += mask & ReleasedCount ? 8 : 0;
    n += mask & PinId ? textSize(f.pinId) : 0;
    n += mask & Before ? textSize(f.before) : 0;
    n += mask & After ? textSize(f.after) : 0;
    n += mask & To ? textSize(f.to) : 0;
    if (mask & Extended) {
        const std::uint16_t more = extendedMaskOf(f);
        n += sizeof more;
        n += more & ViaField ? textSize(f.via) : 0;
        n += more & Pid ? 8 : 0;
        n += more & Command ? textSize(f.command) : 0;
        n += more & HeldBack ? 8 : 0;
        n += more & RequestId ? textSize(f.requestId) : 0;
        n += more & UrgencyField ? textSize(f.urgency) : 0;
        n += more & DeadlineAt ? 8 : 0;
        n += more & Requester ? textSize(f.requester) : 0;
    }
    return n;
}

std::string encodeFacts(const EventFacts &f)
{
    std::string out;
    out.reserve(1 + encodedFactsSize(f));
    out.push_back(kFormat);
    StringWriter w(out);
    writeFacts(w, f);
    return out;
}

std::optional<EventFacts> decodeFacts(std::string_view bytes)
{
    if (bytes.empty() || bytes.front() != kFormat)
        return std::nullopt;
    CheckedReader r(bytes.substr(1));
    EventFacts f;
    readFacts(r, f);
    if (!r.ok() || !r.atEnd() || static_cast<int>(f.mode) > static_cast<int>(Mode::Delete))
        return std::nullopt;
    return f;
}

} // namespace leasehold
