// LeaseModel: the operator levers, cancellation and expiry (the rest is leasemodel.cpp).

#include "bruteoverlap.h"
#include "leasemodel.h"
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>

namespace leasehold::test {

void LeaseModel::cancelWait(TimeMs now, std::uint64_t id)
{
    for (std::size_t p = 0; p < m_parked.size(); ++p) {
        if (m_parked[p].id == id) {
            m_parked.erase(m_parked.begin() + std::ptrdiff_t(p));
            m_waitEnds.push_back({id, false, RefusalReason::LeaseHeld});
            break;
        }
    }
    wake(now);
}

int LeaseModel::releaseHolder(TimeMs now, const std::string &did)
{
    std::vector<std::string> ids;
    for (const MLease &l : m_leases) {
        if (l.agent == did && l.pending < 0)
            ids.push_back(l.id);
    }
    for (const std::string &id : ids)
        endById(id);
    wake(now);
    return int(ids.size());
}

int LeaseModel::releaseAll(TimeMs now)
{
    std::vector<std::string> ids;
    for (const MLease &l : m_leases) {
        if (l.pending < 0)
            ids.push_back(l.id);
    }
    for (const std::string &id : ids)
        endById(id);
    wake(now);
    return int(ids.size());
}

bool LeaseModel::endById(const std::string &id)
{
    for (std::size_t i = 0; i < m_leases.size(); ++i) {
        if (m_leases[i].id == id && m_leases[i].pending < 0) {
            endLease(i, 2);
            return true;
        }
    }
    return false;
}

bool LeaseModel::releaseLease(TimeMs now, const std::string &id)
{
    const bool found = endById(id);
    wake(now);
    return found;
}

void LeaseModel::suspend(TimeMs now, const std::string &did, bool on)
{
    if (on)
        m_suspended.insert(did);
    else
        m_suspended.erase(did);
    if (!on)
        return;
    for (std::size_t p = 0; p < m_parked.size();) {
        if (m_parked[p].agent == did) {
            m_waitEnds.push_back({m_parked[p].id, false, RefusalReason::Suspended});
            m_parked.erase(m_parked.begin() + std::ptrdiff_t(p));
        } else {
            ++p;
        }
    }
    wake(now);
}

void LeaseModel::pause(TimeMs now, bool on)
{
    m_paused = on;
    if (on) {
        for (const MWaiter &w : m_parked)
            m_waitEnds.push_back({w.id, false, RefusalReason::Paused});
        m_parked.clear();
    }
    wake(now);
}

void LeaseModel::expireDue(TimeMs now)
{
    for (;;) {
        // The earliest due item by (deadline, kind): pins, leases, wants, waits.
        TimeMs best = now + 1;
        int kind = 9;
        std::string key;
        std::size_t index = 0;
        auto consider = [&](TimeMs at, int k, std::string id, std::size_t i) {
            if (at <= now && (at < best || (at == best && k < kind))) {
                best = at;
                kind = k;
                key = std::move(id);
                index = i;
            }
        };
        for (const auto &[id, p] : m_pins)
            consider(p.deadline, 0, id, 0);
        for (std::size_t i = 0; i < m_leases.size(); ++i) {
            if (m_leases[i].pending < 0)
                consider(m_leases[i].expiresAt, 1, {}, i);
        }
        for (const auto &[k, w] : m_wants)
            consider(w.deadline, 2, k.first + "\n" + k.second, 0);
        for (std::size_t i = 0; i < m_parked.size(); ++i)
            consider(m_parked[i].deadline, 3, {}, i);
        if (kind == 9)
            break;
        if (getenv("LEASEHOLD_MODEL_TRACE"))
            printf("  model due kind %d at %lld\n", kind, static_cast<long long>(best));
        if (kind == 0) {
            const MPin pin = m_pins[key];
            auto l = std::find_if(m_leases.begin(), m_leases.end(),
                                  [&](const MLease &x) { return x.id == pin.leaseId; });
            m_pins.erase(key);
            if (--l->pins == 0 && l->pending >= 0)
                finish(std::size_t(l - m_leases.begin()));
        } else if (kind == 1) {
            endLease(index, 1);
        } else if (kind == 2) {
            const auto nl = key.find('\n');
            m_wants.erase({key.substr(0, nl), key.substr(nl + 1)});
        } else {
            // Whatever was freed goes to the queue first; if that moved anyone, choose again.
            if (wake(now))
                continue;
            bool handled = false;
            for (std::size_t i = index; i < m_parked.size() && !handled; ++i) {
                const MWaiter w = m_parked[i];
                m_parked.erase(m_parked.begin() + std::ptrdiff_t(i));
                const auto [idx, holders] = contention(w.agent, w.resources, w.exclusive, i);
                if (idx < 0) {
                    commit(now, w.agent, w.resources, w.exclusive, w.mode, w.ttl);
                    m_waitEnds.push_back({w.id, true, RefusalReason::LeaseHeld});
                } else {
                    const ResourceName &r = w.resources[std::size_t(idx)];
                    recordWant(now, w.agent, r, w.exclusive[std::size_t(idx)],
                               stampedeWaiters(w.agent, r));
                    m_waitEnds.push_back({w.id, false, RefusalReason::LeaseHeld});
                }
                handled = true;
            }
        }
    }
    wake(now);
}

} // namespace leasehold::test
