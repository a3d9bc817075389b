// layer_norm over the last axis; see kernels/norm.h for the backward's derivation.
// Leaves out: a residual input (add() it first).
#include "heed/autograd/ops/layer_norm.h"

#include "heed/kernels/norm.h"
#include "heed/util/error.h"

namespace heed {

Var layer_norm(Var x, Var gamma, Var beta, float eps) {
  const Shape& s = x.shape();
  const int64_t D = s.last(), N = s.rows();
  check(gamma.shape() == Shape{D} && beta.shape() == Shape{D}, "layer_norm: x ", s,
        " needs gamma and beta of shape [", D, "], got ", gamma.shape(), " and ", beta.shape());
  Graph& G = x.graph();
  Tensor y = G.alloc(s);
  float* mean = G.arena().array<float>(N);  // [N] saved for backward
  float* rstd = G.arena().array<float>(N);  // [N]
  kernels::layer_norm_forward(x.value().data(), gamma.value().data(), beta.value().data(), y.data(),
                              mean, rstd, N, D, eps);
  return G.make(y, {x, gamma, beta}, [=](const Tensor& dy) {
    const Var::GradTarget dx = x.requires_grad() ? x.grad_target() : Var::GradTarget{nullptr, 0.f};
    kernels::layer_norm_backward(dy.data(), x.value().data(), gamma.value().data(), mean, rstd,
                                 dx.data, dx.accumulate(),
                                 gamma.requires_grad() ? gamma.grad().data() : nullptr,
                                 beta.requires_grad() ? beta.grad().data() : nullptr, N, D);
  });
}

}  // namespace heed
