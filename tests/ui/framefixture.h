#pragma once

// A real engine on a manual clock (EngineFixture) whose state reaches the console's models as
// frames, the way ConsoleFeed publishes them: each frame carries the snapshot of now and the
// ledger events recorded since the previous frame.

#include "../core/enginetest.h"
#include "consoleframe.h"

#include <memory>

namespace leasehold::test {

class FrameFixture : protected EngineFixture
{
protected:
    // A fresh engine, and frames numbered from 1 again.
    void resetFrames()
    {
        reset();
        m_frames = 0;
        m_taken = 0;
    }

    // A frame of the engine as it is now, carrying the events recorded since the last one.
    ConsoleFramePtr frame(ServiceFacts facts = {})
    {
        auto f = std::make_shared<ConsoleFrame>();
        f->number = ++m_frames;
        f->snapshot = m_engine->snapshot();
        f->events.assign(m_listener.events.begin() + std::ptrdiff_t(m_taken),
                         m_listener.events.end());
        m_taken = m_listener.events.size();
        f->facts = std::move(facts);
        return f;
    }

private:
    std::uint64_t m_frames = 0;
    std::size_t m_taken = 0;
};

} // namespace leasehold::test
