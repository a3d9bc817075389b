// sum / mean / max over an axis, and over everything.
// Leaves out: variance (layer_norm computes its own).
#include "heed/autograd/ops/reduce.h"

#include "heed/autograd/ops/arithmetic.h"
#include "heed/autograd/ops/shape.h"
#include "heed/kernels/elementwise.h"
#include "heed/kernels/reduce.h"

namespace heed {
namespace {
Shape reduced(const Shape& s, int axis, bool keepdim) {
  return keepdim ? s.with(axis, 1) : s.without(axis);
}
}  // namespace

Var sum(Var x, int axis, bool keepdim) {
  const Shape& s = x.shape();
  int64_t outer = s.outer(axis), n = s.dim(axis), inner = s.inner(axis);
  Graph& G = x.graph();
  Tensor y = G.alloc(reduced(s, axis, keepdim));
  kernels::sum_axis(x.value().data(), y.data(), outer, n, inner);
  return G.make(y, {x}, [=](const Tensor& dy) {  // dx[o, k, i] += dy[o, i]
    kernels::sum_axis_backward(dy.data(), x.grad().data(), outer, n, inner);
  });
}

Var mean(Var x, int axis, bool keepdim) {
  return affine(sum(x, axis, keepdim), 1.f / static_cast<float>(x.shape().dim(axis)), 0.f);
}

Var max(Var x, int axis, bool keepdim) {
  const Shape& s = x.shape();
  int64_t outer = s.outer(axis), n = s.dim(axis), inner = s.inner(axis);
  Graph& G = x.graph();
  Tensor y = G.alloc(reduced(s, axis, keepdim));
  int32_t* arg = G.arena().array<int32_t>(static_cast<size_t>(outer * inner));
  kernels::max_axis(x.value().data(), y.data(), arg, outer, n, inner);
  return G.make(y, {x}, [=](const Tensor& dy) {  // dx[o, argmax, i] += dy[o, i]
    kernels::max_axis_backward(dy.data(), arg, x.grad().data(), outer, n, inner);
  });
}

Var sum_all(Var x) {
  return reshape(sum(reshape(x, Shape{x.value().numel()}), 0), Shape{});
}

Var mean_all(Var x) {
  return affine(sum_all(x), 1.f / static_cast<float>(x.value().numel()), 0.f);
}

}  // namespace heed
