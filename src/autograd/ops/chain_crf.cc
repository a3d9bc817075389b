// The linear-chain CRF's marginals as an op (see the header); forward and backward side by
// side, the recursions in kernels/chain_crf.cc.
#include "heed/autograd/ops/chain_crf.h"

#include "heed/kernels/chain_crf.h"
#include "heed/util/error.h"

namespace heed {

Var chain_crf_marginals(Var theta, Var pairwise, std::span<const int32_t> lengths) {
  check(theta.shape().rank() == 2, "chain_crf_marginals: theta must be [B, S], got ",
        theta.shape());
  check(pairwise.shape() == Shape({2, 2}), "chain_crf_marginals: pairwise must be [2, 2], got ",
        pairwise.shape());
  const int64_t B = theta.dim(0), S = theta.dim(1);
  check(static_cast<int64_t>(lengths.size()) == B, "chain_crf_marginals: ", lengths.size(),
        " lengths for ", B, " rows");
  for (int32_t n : lengths)
    check(n >= 0 && n <= S, "chain_crf_marginals: a length of ", n, " in rows of ", S);
  Graph& G = theta.graph();
  Arena& arena = G.arena();
  const int32_t* len = G.copy(lengths).data();                        // lives as long as the graph
  auto* alpha = arena.array<double>(static_cast<size_t>(B * S * 2));  // [B, S, 2]
  auto* beta = arena.array<double>(static_cast<size_t>(B * S * 2));   // [B, S, 2]
  auto* logZ = arena.array<double>(static_cast<size_t>(B));           // [B]
  Tensor mu = G.alloc(theta.shape());                                 // [B, S]
  kernels::chain_crf_forward(B, S, theta.value().data(), pairwise.value().data(), len, alpha, beta,
                             logZ, mu.data());
  return G.make(mu, {theta, pairwise}, [=](const Tensor& dmu) {
    kernels::chain_crf_backward(B, S, theta.value().data(), pairwise.value().data(), len, alpha,
                                beta, logZ, mu.data(), dmu.data(), theta.grad().data(),
                                pairwise.grad().data());
  });
}

}  // namespace heed
