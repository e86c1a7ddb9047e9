#pragma once

namespace leasehold {

// A visitor made of lambdas: std::visit(Overloaded{[](const A &) {}, [](const B &) {}}, v).
template<class... F> struct Overloaded : F...
{
    using F::operator()...;
};
template<class... F> Overloaded(F...) -> Overloaded<F...>;

} // namespace leasehold
