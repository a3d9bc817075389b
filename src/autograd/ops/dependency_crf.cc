// The projective dependency model's arc marginals as an op (see the header); forward and
// backward side by side, the recursions in kernels/dependency_crf.cc.
#include "heed/autograd/ops/dependency_crf.h"

#include "heed/kernels/dependency_crf.h"
#include "heed/util/error.h"

namespace heed {

Var dependency_marginals(Var theta, std::span<const int32_t> lengths) {
  check(theta.shape().rank() == 3 && theta.dim(1) == theta.dim(2) + 1,
        "dependency_marginals: theta must be [B, S + 1, S], got ", theta.shape());
  const int64_t B = theta.dim(0), S = theta.dim(2);
  check(static_cast<int64_t>(lengths.size()) == B, "dependency_marginals: ", lengths.size(),
        " lengths for ", B, " rows");
  for (int32_t n : lengths)
    check(n >= 0 && n <= S, "dependency_marginals: a length of ", n, " in rows of ", S);
  Graph& G = theta.graph();
  Arena& arena = G.arena();
  const int32_t* len = G.copy(lengths).data();  // lives as long as the graph
  auto* saved = arena.array<double>(static_cast<size_t>(B * kernels::dependency_crf_saved(S)));
  auto* logZ = arena.array<double>(static_cast<size_t>(B));  // [B]
  Tensor mu = G.alloc(theta.shape());                        // [B, S + 1, S]
  kernels::dependency_crf_forward(B, S, theta.value().data(), len, mu.data(), logZ, saved);
  return G.make(mu, {theta}, [=](const Tensor& dmu) {
    kernels::dependency_crf_backward(B, S, theta.value().data(), len, saved, dmu.data(),
                                     theta.grad().data());
  });
}

}  // namespace heed
