// Monotonic attention's ops (see the header): shape checks, the kernel's forward now and its
// backward when the graph runs backward.
#include "heed/autograd/ops/monotonic.h"

#include "heed/kernels/monotonic.h"
#include "heed/util/error.h"

namespace heed {
namespace {

void check_rows(const char* op, Var a, Var b) {
  check(a.shape().rank() == 2 && a.shape() == b.shape(), op, ": both inputs must be [B, S], got ",
        a.shape(), " and ", b.shape());
}

}  // namespace

Var monotonic_alignment(Var p, Var prev) {
  check_rows("monotonic_alignment", p, prev);
  Graph& G = p.graph();
  const int64_t B = p.dim(0), S = p.dim(1);
  Tensor q = G.alloc(p.shape());      // [B, S]: the probability of reaching j, for the backward
  Tensor alpha = G.alloc(p.shape());  // [B, S]
  kernels::monotonic_alignment_forward(B, S, p.value().data(), prev.value().data(), q.data(),
                                       alpha.data());
  return G.make(alpha, {p, prev}, [=](const Tensor& dalpha) {
    kernels::monotonic_alignment_backward(B, S, p.value().data(), q.data(), dalpha.data(),
                                          p.grad().data(), prev.grad().data());
  });
}

Var monotonic_alignments(Var p) {
  check(p.shape().rank() == 3, "monotonic_alignments: p must be [R, T, S], got ", p.shape());
  Graph& G = p.graph();
  const int64_t R = p.dim(0), T = p.dim(1), S = p.dim(2);
  Tensor q = G.alloc(p.shape());  // [R, T, S], for the backward
  Tensor alpha = G.alloc(p.shape());
  kernels::monotonic_alignments_forward(R, T, S, p.value().data(), q.data(), alpha.data());
  return G.make(alpha, {p}, [=](const Tensor& dalpha) {
    kernels::monotonic_alignments_backward(R, T, S, p.value().data(), q.data(), dalpha.data(),
                                           p.grad().data());
  });
}

Var mocha_chunk(Var alpha, Var u, int64_t w) {
  check_rows("mocha_chunk", alpha, u);
  check(w >= 1, "mocha_chunk: the chunk must hold at least 1 entry, got ", w);
  Graph& G = alpha.graph();
  const int64_t B = alpha.dim(0), S = alpha.dim(1);
  Tensor beta = G.alloc(alpha.shape());  // [B, S]
  kernels::mocha_chunk_forward(B, S, w, alpha.value().data(), u.value().data(), beta.data());
  return G.make(beta, {alpha, u}, [=](const Tensor& dbeta) {
    kernels::mocha_chunk_backward(B, S, w, alpha.value().data(), u.value().data(), dbeta.data(),
                                  alpha.grad().data(), u.grad().data());
  });
}

}  // namespace heed
