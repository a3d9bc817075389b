// Inverted dropout with a counter-based mask, regenerated in backward.
// Leaves out: storing masks (recomputing the hash is cheaper than the memory traffic).
#include "heed/autograd/ops/dropout.h"

#include "heed/kernels/elementwise.h"
#include "heed/util/error.h"

namespace heed {

uint64_t dropout_stream(Graph& g, float p) {
  return g.training() && p > 0.f ? g.next_stream() : 0;
}

Var dropout(Var x, float p) {
  return dropout(x, p, dropout_stream(x.graph(), p));
}

Var dropout(Var x, float p, uint64_t stream) {
  check(p >= 0.f && p < 1.f, "dropout: p must be in [0, 1), got ", p);
  Graph& G = x.graph();
  if (!G.training() || p == 0.f) return x;
  Tensor y = G.alloc(x.shape());
  int64_t n = y.numel();
  kernels::dropout(x.value().data(), y.data(), n, stream, p, false);
  return G.make(y, {x}, [=](const Tensor& dy) {
    const Var::GradTarget dx = x.grad_target();
    kernels::dropout(dy.data(), dx.data, n, stream, p, dx.accumulate());
  });
}

}  // namespace heed
