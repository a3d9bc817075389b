// matmul and linear: forward and backward side by side, all through kernels::gemm.
// Leaves out: fusing activations into the GEMM epilogue.
#include "heed/autograd/ops/matmul.h"

#include <algorithm>
#include <limits>

#include "heed/kernels/argmax_screen.h"
#include "heed/kernels/bf16.h"
#include "heed/kernels/elementwise.h"
#include "heed/kernels/gemm.h"
#include "heed/kernels/quantize.h"
#include "heed/kernels/reduce.h"
#include "heed/kernels/softmax.h"
#include "heed/kernels/vmath.h"
#include "heed/util/error.h"

namespace heed {
namespace {

// The geometry of C = alpha op(A) op(B), resolved once when the node is built.
struct Geometry {
  int64_t batch = 1, M = 0, N = 0, K = 0;
  int64_t stride_a = 0, stride_b = 0;  // 0: the operand is shared by the whole batch
  Shape out;
};

Geometry geometry(const Shape& sa, const Shape& sb, const MatmulOptions& o) {
  auto bad = [&](const char* why) {
    fail("matmul: ", why, ": A ", sa.str(), (o.trans_a ? "^T" : ""), " and B ", sb.str(),
         (o.trans_b ? "^T" : ""));
  };
  if (sa.rank() < 2 || sb.rank() < 2) bad("operands need rank >= 2");
  Geometry g;
  int64_t am = sa.dim(-2), ak = sa.dim(-1), bk = sb.dim(-2), bn = sb.dim(-1);
  if (o.trans_a) std::swap(am, ak);
  if (o.trans_b) std::swap(bk, bn);
  if (ak != bk) bad("inner dimensions differ");
  g.M = am;
  g.N = bn;
  g.K = ak;
  if (sb.rank() == 2 && !o.trans_a) {  // [..., M, K] x [K, N]: one GEMM over all rows
    g.M = sa.rows();
    g.out = sa.with(-1, bn);
    return g;
  }
  if (sb.rank() == 2) {  // batched A^T x shared B
    g.batch = sa.numel() / (am * ak);
    g.stride_a = am * ak;
    g.out = sa;
  } else if (sa.rank() == 2) {  // shared A x batched B
    g.batch = sb.numel() / (bk * bn);
    g.stride_b = bk * bn;
    g.out = sb;
  } else {
    if (sa.rank() != sb.rank()) bad("batch ranks differ");
    for (int i = 0; i < sa.rank() - 2; ++i)
      if (sa[i] != sb[i]) bad("batch dimensions differ");
    g.batch = sa.numel() / (am * ak);
    g.stride_a = am * ak;
    g.stride_b = bk * bn;
    g.out = sa;
  }
  g.out = g.out.with(-2, am).with(-1, bn);
  return g;
}

// Accumulating GEMMs over a batch. When the destination is shared by the batch (stride 0),
// the products are summed into it one after the other (no two threads write it at once).
void gemm_acc(bool ta, bool tb, const Geometry& g, int64_t M, int64_t N, int64_t K, float alpha,
              const float* A, int64_t lda, int64_t sa, const float* B, int64_t ldb, int64_t sb,
              Var::GradTarget C, int64_t sc) {
  if (sc == 0 && g.batch > 1) {
    for (int64_t i = 0; i < g.batch; ++i)
      kernels::gemm(ta, tb, M, N, K, alpha, A + i * sa, lda, B + i * sb, ldb, i ? 1.f : C.beta,
                    C.data, N);
    return;
  }
  kernels::gemm_batched(ta, tb, g.batch, M, N, K, alpha, A, lda, sa, B, ldb, sb, C.beta, C.data, N,
                        sc);
}

// linear() in mixed precision (Precision::bf16): the bias and its gradient stay fp32.
Var linear_bf16(Var x, Var w, Var b, Tensor y) {
  const Bf16Product p(x, w);
  const bool has_bias = b.valid();
  p.forward(0.f, y.data(), has_bias ? b.value().data() : nullptr);  // y [M, N] = x W^T + b
  const Var inputs[3] = {x, w, b};
  return x.graph().make(y, std::span<const Var>(inputs, has_bias ? 3 : 2), [=](const Tensor& dy) {
    p.backward(dy.data(), x, w);
    if (has_bias && b.requires_grad()) {  // db [N] += sum_rows dy
      const Var::GradTarget db = b.grad_target();
      kernels::reduce_to(dy.data(), Shape{p.M, p.N}, db.data, Shape{p.N}, db.accumulate());
    }
  });
}

}  // namespace

Bf16Product::Bf16Product(Var x, Var w)
    : M(x.shape().rows()),
      Mp(kernels::bf16_padded_rows(M)),
      N(w.shape()[0]),
      K(w.shape()[1]),
      xb(x.graph().arena().array<kernels::bf16>(static_cast<size_t>(Mp * K))) {
  kernels::to_bf16(x.value().data(), M, K, K, xb);
  std::fill(xb + M * K, xb + Mp * K, kernels::bf16{0});
  if (const Parameter* p = w.param()) {
    wb = x.graph().bf16_value(*p);  // once per graph
  } else {
    auto* copy = x.graph().arena().array<kernels::bf16>(static_cast<size_t>(N * K));
    kernels::to_bf16(w.value().data(), N, K, K, copy);
    wb = copy;
  }
}

void Bf16Product::forward(float beta, float* y, const float* bias) const {
  kernels::gemm_bf16(false, true, M, N, K, xb, K, wb, K, beta, y, N, bias);
}

void Bf16Product::backward(const float* dy, Var x, Var w) const {
  Graph& G = x.graph();
  kernels::bf16* dyb = G.arena().array<kernels::bf16>(static_cast<size_t>(Mp * N));  // [Mp, N]
  kernels::to_bf16(dy, M, N, N, dyb);
  std::fill(dyb + M * N, dyb + Mp * N, kernels::bf16{0});
  if (x.requires_grad()) {  // dx [M, K] += dy [M, N] W [N, K]
    Var::GradTarget dx = x.grad_target();
    kernels::gemm_bf16(false, false, M, K, N, dyb, N, wb, K, dx.beta, dx.data, K);
  }
  if (w.requires_grad()) {  // dW [N, K] += dy^T [N, Mp] x [Mp, K] (the padded rows are 0)
    Var::GradTarget dw = w.grad_target();
    kernels::gemm_bf16(true, false, N, K, Mp, dyb, N, xb, K, dw.beta, dw.data, K);
  }
}

Var matmul(Var a, Var b, MatmulOptions o) {
  Geometry g = geometry(a.shape(), b.shape(), o);
  Graph& G = a.graph();
  Tensor c = G.alloc(g.out);  // [..., M, N]
  const int64_t M = g.M, N = g.N, K = g.K;
  const int64_t lda = o.trans_a ? M : K, ldb = o.trans_b ? K : N, sc = M * N;
  kernels::gemm_batched(o.trans_a, o.trans_b, g.batch, M, N, K, o.alpha, a.value().data(), lda,
                        g.stride_a, b.value().data(), ldb, g.stride_b, 0.f, c.data(), N, sc);
  return G.make(c, {a, b}, [=](const Tensor& dc) {
    const float *A = a.value().data(), *B = b.value().data(), *dC = dc.data();
    if (a.requires_grad()) {
      Var::GradTarget dA = a.grad_target();
      if (!o.trans_a)  // dA [M, K] += dC op(B)^T
        gemm_acc(false, !o.trans_b, g, M, K, N, o.alpha, dC, N, sc, B, ldb, g.stride_b, dA,
                 g.stride_a);
      else  // dA^T: dA [K, M] += op(B) dC^T
        gemm_acc(o.trans_b, true, g, K, M, N, o.alpha, B, ldb, g.stride_b, dC, N, sc, dA,
                 g.stride_a);
    }
    if (b.requires_grad()) {
      Var::GradTarget dB = b.grad_target();
      if (!o.trans_b)  // dB [K, N] += op(A)^T dC
        gemm_acc(!o.trans_a, false, g, K, N, M, o.alpha, A, lda, g.stride_a, dC, N, sc, dB,
                 g.stride_b);
      else  // dB^T: dB [N, K] += dC^T op(A)
        gemm_acc(true, o.trans_a, g, N, K, M, o.alpha, dC, N, sc, A, lda, g.stride_a, dB,
                 g.stride_b);
    }
  });
}

Var linear(Var x, Var w, Var b) {
  const Shape &sx = x.shape(), &sw = w.shape();
  check(sw.rank() == 2 && sx.rank() >= 1 && sx.last() == sw[1], "linear: x ", sx, " and W ", sw,
        " (W is [out, in])");
  const bool has_bias = b.valid();
  if (has_bias && (b.shape().rank() != 1 || b.shape()[0] != sw[0]))
    fail("linear: bias ", b.shape(), " for W ", sw);
  const int64_t M = sx.rows(), N = sw[0], K = sw[1];
  Graph& G = x.graph();
  Tensor y = G.alloc(sx.with(-1, N));  // [..., N]
  if (inference_product(x, w, has_bias ? b.value().data() : nullptr, false, y.data())) {
    const Var inputs[3] = {x, w, b};  // inference: no backward is recorded
    return G.make(y, std::span<const Var>(inputs, has_bias ? 3 : 2), [](const Tensor&) {});
  }
  if (G.precision() == Precision::bf16 && M > 0) return linear_bf16(x, w, b, y);
  if (has_bias)  // preload C with the bias, then C = x W^T + C
    kernels::preload_rows(b.value().data(), M, N, y.data(), false);
  fp32_product(x, w, has_bias ? 1.f : 0.f, y.data());
  const Var inputs[3] = {x, w, b};
  return G.make(y, std::span<const Var>(inputs, has_bias ? 3 : 2), [=, &G](const Tensor& dy) {
    if (x.requires_grad()) {  // dx [M, K] += dy [M, N] W [N, K]
      Var::GradTarget dx = x.grad_target();
      kernels::gemm(false, false, M, K, N, 1.f, dy.data(), N, w.value().data(), K, dx.beta, dx.data,
                    K);
    }
    if (w.requires_grad()) {                         // dW [N, K] += dy^T [N, M] x [M, K]
      if (w.param() && M <= kStoredTransposeRows) {  // a step's: with the other steps', later
        G.defer_weight_gradient(w.grad().data(), N, K, dy.data(), x.value().data(), M);
      } else {
        Var::GradTarget dw = w.grad_target();
        kernels::gemm(true, false, N, K, M, 1.f, dy.data(), N, x.value().data(), K, dw.beta,
                      dw.data, K);
      }
    }
    if (has_bias && b.requires_grad()) {  // db [N] += sum_rows dy
      const Var::GradTarget db = b.grad_target();
      kernels::reduce_to(dy.data(), Shape{M, N}, db.data, Shape{N}, db.accumulate());
    }
  });
}

Var linear(Var x, Var w) {
  return linear(x, w, Var());
}

void fp32_product(Var x, Var w, float beta, float* y) {
  const int64_t M = x.shape().rows(), N = w.dim(0), K = w.dim(1);
  if (const Parameter* p = w.param(); p && M <= kStoredTransposeRows) {
    kernels::gemm(false, false, M, N, K, 1.f, x.value().data(), K, x.graph().transposed_value(*p),
                  N, beta, y, N);
    return;
  }
  kernels::gemm(false, true, M, N, K, 1.f, x.value().data(), K, w.value().data(), K, beta, y, N);
}

namespace {
constexpr int64_t kInferenceBlockFloats = 64 * 1024;  // 256 KB of y a block

// W's int8 copy, when an inference graph multiplies by it: a narrow W (the attention's v,
// N = 1) costs more to quantize x for than it saves
const kernels::Int8Matrix* int8_copy(const Parameter& p) {
  return p.int8 && p.int8->rows >= kernels::kInt8MinOutputs ? p.int8.get() : nullptr;
}

// y [M, n] (rows ldy apart) = x [M, K] W^T's columns n0 .. n0 + n - 1 (+ b, + y): the bias
// preloaded into y, then the product with beta 1
void fp32_columns(const float* x, int64_t M, const Tensor& wt, int64_t n0, int64_t n,
                  const float* bias, bool accumulate, float* y, int64_t ldy) {
  const int64_t K = wt.dim(0), N = wt.dim(1);  // W^T [K, N]
  if (bias) kernels::preload_block(bias + n0, M, n, y, ldy, accumulate);
  kernels::gemm(false, false, M, n, K, 1.f, x, K, wt.data() + n0, N, bias || accumulate ? 1.f : 0.f,
                y, ldy);
}
}  // namespace

bool inference_product(Var x, Var w, const float* bias, bool accumulate, float* y) {
  Graph& G = x.graph();
  const Parameter* p = w.param();
  if (G.training() || !p) return false;
  const int64_t M = x.shape().rows();
  if (const kernels::Int8Matrix* q = int8_copy(*p)) {
    const int64_t N = q->rows, K = q->cols;
    auto* qx = G.arena().array<int8_t>(static_cast<size_t>(M * K));    // q(x) [M, K]
    auto* sx = G.arena().array<float>(static_cast<size_t>(M));         // s_x [M]
    auto* acc = G.arena().array<int32_t>(static_cast<size_t>(M * N));  // [M, N]
    kernels::quantize_rows(x.value().data(), M, K, qx, sx);
    kernels::gemm_int8(M, qx, sx, *q, bias, acc, y, accumulate);
    return true;
  }
  if (!p->transposed) return false;
  const int64_t N = p->transposed->dim(1);  // W^T [K, N]
  // A y larger than L2 (beam search's output layer, [160, 7,859]) goes in blocks of columns, so
  // that the block preloaded with the bias is still in L2 when the product reads it back (else y
  // crosses memory three times: written, read, written)
  const int64_t nb = bias && M * N > kInferenceBlockFloats
                         ? std::max<int64_t>(64, kInferenceBlockFloats / M / 64 * 64)
                         : N;
  for (int64_t n0 = 0; n0 < N; n0 += nb)
    fp32_columns(x.value().data(), M, *p->transposed, n0, std::min(nb, N - n0), bias, accumulate,
                 y + n0, N);
  return true;
}

void best_outputs(Var x, Var w, Var b, int64_t first, int64_t k, int32_t* ids, float* values,
                  float* log_z) {
  Graph& G = x.graph();
  const Parameter* p = w.param();
  const int64_t M = x.shape().rows(), N = w.dim(0), K = w.dim(1);
  check(first >= 0 && k >= 1 && first + k <= N, "best_outputs: the ", k, " best of columns ", first,
        "..", N - 1);
  if (M == 0) return;
  const float* bias = b.valid() ? b.value().data() : nullptr;  // [N]
  const kernels::Int8Matrix* q = !G.training() && p ? int8_copy(*p) : nullptr;
  const bool int8 = q != nullptr, fp32 = !G.training() && p && !int8 && p->transposed;
  // fp32 at one or two rows: per-row dots of W; and the argmax alone through W's int8 screen,
  // which reads in fp32 only the rows that can be it (kernels/argmax_screen.h)
  const bool dots = fp32 && M <= kDotRows;
  const float* x0 = x.value().data();
  if (dots && !log_z && k == 1 && p->screen) {
    const kernels::ScreenScratch scratch{G.arena().array<int8_t>(static_cast<size_t>(K)),
                                         G.arena().array<int32_t>(static_cast<size_t>(N)),
                                         G.arena().array<float>(static_cast<size_t>(N))};
    bool screened = true;
    for (int64_t m = 0; m < M && screened; ++m)
      screened = kernels::screened_argmax(x0 + m * K, w.value().data(), bias, *p->screen, first,
                                          scratch, ids + m, values + m);
    if (screened) return;  // else (x not finite) the whole read below
  }
  // y's blocks: kBestColumns wide for the reads, and as many of them a product as fit 256 KB
  const int64_t nb =
      int8 || fp32 ? std::max<int64_t>(1, kInferenceBlockFloats / (M * kBestColumns)) * kBestColumns
                   : N;
  const float* whole = nullptr;  // without a copy of W: y made whole
  if (!int8 && !fp32) whole = linear(x, w, b).value().data();
  // a block of y [M, nb] (rows nb apart), or the whole y [M, N]
  float* y = whole ? nullptr : G.arena().array<float>(static_cast<size_t>(M * std::min(nb, N)));
  int8_t* qx = nullptr;
  float* sx = nullptr;
  int32_t* acc = nullptr;
  if (int8) {  // x quantized once, for every block
    qx = G.arena().array<int8_t>(static_cast<size_t>(M * K));
    sx = G.arena().array<float>(static_cast<size_t>(M));
    acc = G.arena().array<int32_t>(static_cast<size_t>(M * std::min(nb, N)));
    kernels::quantize_rows(x0, M, K, qx, sx);
  }
  std::vector<kernels::LogSumExp> lse(log_z ? static_cast<size_t>(M) : 0);
  std::vector<kernels::TopK> best;
  best.reserve(static_cast<size_t>(M));
  for (int64_t m = 0; m < M; ++m) best.push_back({k, ids + m * k, values + m * k});
  for (int64_t n0 = 0; n0 < N; n0 += nb) {
    const int64_t n = std::min(nb, N - n0);
    const float* block = whole ? whole + n0 : y;
    const int64_t ld = whole ? N : n;
    if (int8) {
      kernels::gemm_int8_columns(M, qx, sx, *q, n0, n, bias, acc, y, n);
    } else if (dots) {
      for (int64_t m = 0; m < M; ++m)
        kernels::dot_rows(x0 + m * K, w.value().data(), K, bias, n0, n, y + m * n);
    } else if (fp32) {
      fp32_columns(x0, M, *p->transposed, n0, n, bias, false, y, n);
    }
    for (int64_t m = 0; m < M; ++m)
      for (int64_t c0 = 0; c0 < n; c0 += kBestColumns) {  // the reads: always kBestColumns wide
        const int64_t c = std::min(kBestColumns, n - c0), col = n0 + c0;
        const float* row = block + m * ld + c0;
        const float block_max = log_z ? lse[static_cast<size_t>(m)].add(row, c)
                                      : vmath::max(row, c, -std::numeric_limits<float>::infinity());
        kernels::TopK& top = best[static_cast<size_t>(m)];
        if (!top.can_enter(block_max)) continue;  // most blocks, once the k best are found
        const int64_t from = std::clamp<int64_t>(first - col, 0, c);  // candidates from `first`
        top.add(row + from, c - from, static_cast<int32_t>(col + from));
      }
  }
  if (log_z)
    for (int64_t m = 0; m < M; ++m) log_z[m] = lse[static_cast<size_t>(m)].value();
}

}  // namespace heed
