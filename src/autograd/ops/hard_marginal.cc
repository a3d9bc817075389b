// The exact hard-attention marginal as an op (see the header): shape checks, the kernel's
// forward now and its backward when the graph runs backward.
#include "heed/autograd/ops/hard_marginal.h"

#include "heed/kernels/hard_marginal.h"
#include "heed/util/error.h"

namespace heed {

Var hard_marginal(Var base, Var keys, Var log_alpha) {
  check(base.shape().rank() == 2 && keys.shape().rank() == 3 && log_alpha.shape().rank() == 2,
        "hard_marginal: base [B, V], keys [B, S, V] and log_alpha [B, S], got ", base.shape(), ", ",
        keys.shape(), " and ", log_alpha.shape());
  const int64_t B = base.dim(0), V = base.dim(1), S = keys.dim(1);
  check(keys.dim(0) == B && keys.dim(2) == V && log_alpha.dim(0) == B && log_alpha.dim(1) == S,
        "hard_marginal: shapes disagree: base ", base.shape(), ", keys ", keys.shape(),
        ", log_alpha ", log_alpha.shape());
  Graph& G = base.graph();
  Tensor out = G.alloc(base.shape());  // [B, V]
  kernels::hard_marginal_forward(B, S, V, base.value().data(), keys.value().data(),
                                 log_alpha.value().data(), out.data());
  return G.make(out, {base, keys, log_alpha}, [=](const Tensor& dout) {
    kernels::hard_marginal_backward(
        B, S, V, base.value().data(), keys.value().data(), log_alpha.value().data(), out.data(),
        dout.data(), base.grad().data(), keys.grad().data(), log_alpha.grad().data());
  });
}

}  // namespace heed
