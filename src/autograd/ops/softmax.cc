// softmax / log_softmax with an additive mask, and masked_fill.
// Leaves out: differentiating the mask (it is data, not a parameter).
#include "heed/autograd/ops/softmax.h"

#include "heed/kernels/layout.h"
#include "heed/kernels/softmax.h"
#include "heed/util/error.h"

namespace heed {
namespace {

Var softmax_op(Var x, const Tensor& mask, bool log) {
  Graph& G = x.graph();
  kernels::RowMask m;
  if (mask.data()) {
    check(broadcast_shapes(x.shape(), mask.shape(), "softmax mask") == x.shape(), "softmax: mask ",
          mask.shape(), " does not broadcast to ", x.shape());
    m = {mask.data(), mask.shape()};
  }
  Tensor y = G.alloc(x.shape());
  kernels::softmax_forward(x.value().data(), m, y.data(), x.shape(), log);
  return G.make(y, {x}, [=](const Tensor& dy) {
    kernels::softmax_backward(y.data(), dy.data(), x.grad().data(), x.shape(), log);
  });
}

}  // namespace

Var softmax(Var x, const Tensor& mask) {
  return softmax_op(x, mask, false);
}
Var log_softmax(Var x, const Tensor& mask) {
  return softmax_op(x, mask, true);
}

Var masked_fill(Var x, const Tensor& mask, float value) {
  check(broadcast_shapes(x.shape(), mask.shape(), "masked_fill") == x.shape(), "masked_fill: mask ",
        mask.shape(), " does not broadcast to ", x.shape());
  Graph& G = x.graph();
  Tensor y = G.alloc(x.shape());
  kernels::masked_fill(x.value().data(), mask.data(), mask.shape(), value, y.data(), x.shape());
  return G.make(y, {x}, [=](const Tensor& dy) {
    kernels::masked_fill_backward(dy.data(), mask.data(), mask.shape(), x.grad().data(), x.shape());
  });
}

}  // namespace heed
