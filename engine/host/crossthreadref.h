#pragma once

#include <memory>
#include <mutex>

namespace leasehold {

// A reference to an object that work on another thread may outlive. The object holds a
// CrossThreadRef to itself and clears it first thing in its destructor; work on another thread
// keeps a Weak, and reaches the object only through with(), which runs under the same lock, so
// the object is either there for the whole call or gone before it starts. What with() runs must
// be short and must not wait for the object's own thread: emitting a queued signal, posting a
// call with the object as its context.
//
// QPointer is no substitute: it may only be read on the object's own thread.
template<class T> class CrossThreadRef
{
    struct State
    {
        std::mutex mutex;
        T *object = nullptr;
    };

public:
    class Weak
    {
    public:
        // Runs `work(object)` if the object is still there; whether it ran.
        template<class Work> bool with(Work &&work) const
        {
            std::lock_guard lock(m_state->mutex);
            if (!m_state->object)
                return false;
            work(*m_state->object);
            return true;
        }

    private:
        friend class CrossThreadRef;
        explicit Weak(std::shared_ptr<State> state)
            : m_state(std::move(state))
        {}
        std::shared_ptr<State> m_state;
    };

    explicit CrossThreadRef(T *object)
        : m_state(std::make_shared<State>())
    {
        m_state->object = object;
    }
    ~CrossThreadRef() { clear(); }
    CrossThreadRef(const CrossThreadRef &) = delete;
    CrossThreadRef &operator=(const CrossThreadRef &) = delete;

    Weak weak() const { return Weak(m_state); }
    // The object is going: from now on with() runs nothing; waits for a with() that runs.
    void clear()
    {
        std::lock_guard lock(m_state->mutex);
        m_state->object = nullptr;
    }

private:
    std::shared_ptr<State> m_state;
};

} // namespace leasehold
