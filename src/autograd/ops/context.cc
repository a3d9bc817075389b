// The context-vector op (see the header): shape checks, the fused kernel forward now and its
// backward when the graph runs backward.
#include "heed/autograd/ops/context.h"

#include "heed/kernels/context.h"
#include "heed/util/error.h"

namespace heed {

Var context_vector(Var alpha, Var memory) {
  check(memory.shape().rank() == 3, "context_vector: memory must be [B, S, D], got ",
        memory.shape());
  const int64_t B = memory.dim(0), S = memory.dim(1), D = memory.dim(2);
  check(alpha.shape() == Shape{B, S}, "context_vector: weights ", alpha.shape(), " for memory ",
        memory.shape());
  Graph& G = memory.graph();
  Tensor c = G.alloc(Shape{B, D});  // [B, D]
  kernels::context_forward(B, S, D, alpha.value().data(), memory.value().data(), c.data());
  return G.make(c, {alpha, memory}, [=](const Tensor& dc) {
    kernels::context_backward(B, S, D, alpha.value().data(), memory.value().data(), dc.data(),
                              alpha.requires_grad() ? alpha.grad().data() : nullptr,
                              memory.requires_grad() ? memory.grad().data() : nullptr);
  });
}

}  // namespace heed
