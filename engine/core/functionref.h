#pragma once

#include <type_traits>
#include <utility>

namespace leasehold {

// A non-owning reference to a callable: what std::function is for visitors that never outlive
// the call, without the allocation a capturing lambda can cost std::function.
template<class Signature> class FunctionRef;

template<class R, class... Args> class FunctionRef<R(Args...)>
{
public:
    template<class F, class = std::enable_if_t<!std::is_same_v<std::decay_t<F>, FunctionRef>>>
    FunctionRef(F &&f) // NOLINT(google-explicit-constructor): used like std::function
        : m_object(const_cast<void *>(static_cast<const void *>(&f)))
        , m_call([](void *object, Args... args) -> R {
            return (*static_cast<std::remove_reference_t<F> *>(object))(
                std::forward<Args>(args)...);
        })
    {}

    R operator()(Args... args) const { return m_call(m_object, std::forward<Args>(args)...); }

private:
    void *m_object;
    R (*m_call)(void *, Args...);
};

} // namespace leasehold
