#include "outbox.h"

namespace leasehold {

void Outbox::deliver(EngineListener *listener)
{
    if (m_delivering)
        return;
    if (!listener) {
        m_items.clear();
        return;
    }
    m_delivering = true;
    while (!m_items.empty()) {
        auto item = std::move(m_items.front());
        m_items.pop_front();
        try {
            if (auto *e = std::get_if<LedgerEvent>(&item))
                listener->onEvent(*e);
            else if (auto *b = std::get_if<Began>(&item))
                listener->onWaitBegan(b->waitId, b->actor);
            else if (auto *d = std::get_if<Ended>(&item))
                listener->onWaitEnded(d->waitId, d->outcome);
        } catch (...) {
            // A broken hook must not turn a decision into an error; the item is delivered.
        }
    }
    m_delivering = false;
}

} // namespace leasehold
