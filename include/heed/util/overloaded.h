// The usual visitor of a std::variant from several lambdas: std::visit(overloaded{...}, v).
// Leaves out: anything else about variants.
#pragma once

namespace heed {

template <class... F>
struct overloaded : F... {
  using F::operator()...;
};
template <class... F>
overloaded(F...) -> overloaded<F...>;

}  // namespace heed
