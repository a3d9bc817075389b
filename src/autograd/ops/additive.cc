// The additive energy op (see the header): shape checks, the fused kernel forward now and its
// backward when the graph runs backward.
#include "heed/autograd/ops/additive.h"

#include <algorithm>

#include "heed/kernels/additive.h"
#include "heed/kernels/layout.h"
#include "heed/util/error.h"

namespace heed {

Var additive_energy(Var keys, Var query, Var v) {
  check(keys.shape().rank() == 3, "additive_energy: keys must be [B, S, A], got ", keys.shape());
  const int64_t B = keys.dim(0), S = keys.dim(1), A = keys.dim(2);
  check(query.shape() == Shape{B, A}, "additive_energy: query ", query.shape(), " for keys ",
        keys.shape());
  check(v.value().numel() == A, "additive_energy: v ", v.shape(), " for keys ", keys.shape());
  Graph& G = keys.graph();
  Tensor e = G.alloc(Shape{B, S});  // [B, S]
  kernels::additive_energy_forward(B, S, A, keys.value().data(), query.value().data(),
                                   v.value().data(), e.data());
  return G.make(e, {keys, query, v}, [=, &G](const Tensor& de) {
    float* scratch =
        v.requires_grad() ? G.arena().array<float>(static_cast<size_t>(B * A)) : nullptr;
    kernels::additive_energy_backward(B, S, A, keys.value().data(), query.value().data(),
                                      v.value().data(), de.data(),
                                      keys.requires_grad() ? keys.grad().data() : nullptr,
                                      query.requires_grad() ? query.grad().data() : nullptr,
                                      v.requires_grad() ? v.grad().data() : nullptr, scratch);
  });
}

Var location_energy(Var keys, Var f, Var U, Var query, Var v) {
  check(keys.shape().rank() == 3, "location_energy: keys must be [B, S, A], got ", keys.shape());
  const int64_t B = keys.dim(0), S = keys.dim(1), A = keys.dim(2);
  check(f.shape().rank() == 3 && f.dim(0) == B && f.dim(1) == S, "location_energy: features ",
        f.shape(), " for keys ", keys.shape());
  const int64_t L = f.dim(2);
  check(U.shape() == Shape{A, L}, "location_energy: U ", U.shape(), " for keys ", keys.shape(),
        " and features ", f.shape());
  check(query.shape() == Shape{B, A}, "location_energy: query ", query.shape(), " for keys ",
        keys.shape());
  check(v.value().numel() == A, "location_energy: v ", v.shape(), " for keys ", keys.shape());
  Graph& G = keys.graph();
  // Ut [L, A]: each feature's weights as one run of A floats; a parameter's made once a graph
  // (every decoder step reads it)
  const float* Ut = nullptr;
  if (const Parameter* p = U.param()) {
    Ut = G.transposed_value(*p);
  } else {
    float* t = G.arena().array<float>(static_cast<size_t>(L * A));
    kernels::permute(U.value().data(), U.shape(), {1, 0, 2, 3}, t, false);
    Ut = t;
  }
  Tensor e = G.alloc(Shape{B, S});  // [B, S]
  kernels::location_energy_forward(B, S, A, L, keys.value().data(), f.value().data(), Ut,
                                   query.value().data(), v.value().data(), e.data(),
                                   G.arena().array<float>(static_cast<size_t>(B * A)));
  return G.make(e, {keys, f, U, query, v}, [=, &G](const Tensor& de) {
    float* scratch =
        G.arena().array<float>(static_cast<size_t>(kernels::location_energy_scratch(B, A, L)));
    float* dUt = nullptr;
    if (U.requires_grad()) {
      dUt = G.arena().array<float>(static_cast<size_t>(L * A));
      std::fill(dUt, dUt + L * A, 0.f);
    }
    auto grad = [](Var x) { return x.requires_grad() ? x.grad().data() : nullptr; };
    kernels::location_energy_backward(
        B, S, A, L, keys.value().data(), f.value().data(), Ut, query.value().data(),
        v.value().data(), de.data(),
        {.dK = grad(keys), .df = grad(f), .dUt = dUt, .dq = grad(query), .dv = grad(v)}, scratch);
    if (dUt) kernels::permute(dUt, Shape{L, A}, {1, 0, 2, 3}, U.grad().data(), true);  // dU +=
  });
}

}  // namespace heed
