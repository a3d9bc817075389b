// The fused output layer and cross-entropy (see the header).
// Leaves out: threading of its own (the products are oneDNN's; the chunks run in order).
#include "heed/autograd/ops/linear_cross_entropy.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "heed/autograd/ops/matmul.h"
#include "heed/kernels/bf16.h"
#include "heed/kernels/elementwise.h"
#include "heed/kernels/gemm.h"
#include "heed/kernels/softmax.h"
#include "heed/util/error.h"

namespace heed {
namespace {

// The bounds of the default split (see linear_cross_entropy_split): logits a chunk holds, and
// entries of bf16 dz held between two dx/dW flushes (32 MB)
constexpr int64_t kChunkLogits = int64_t{1} << 21, kFlushEntries = int64_t{1} << 24;

// Rows of bf16 dz held between two dx/dW flushes for chunks of R rows given by the caller:
// about kFlushEntries entries, whole chunks.
int64_t flush_rows_for(int64_t V, int64_t R) {
  const int64_t rows = kFlushEntries / std::max<int64_t>(V, 1);
  return std::max(R, rows / R * R);
}

// dst (= when beta is 0, += otherwise) scale * src, n floats
void scaled_into(float* dst, float beta, const float* src, float scale, int64_t n) {
  if (beta == 0.f) std::fill(dst, dst + n, 0.f);  // a fresh gradient: nothing to add to
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) dst[i] += scale * src[i];
}

}  // namespace

// The default split of M rows: into as few flushes of at most about 2^24 entries of dz (32 MB of
// bf16) as hold them, each into as few chunks of at most about 2^21 logits (8 MB) as hold it, all
// even and multiples of kBf16Rows (bf16 padding stays inside the padded copies). Measured on a Xeon
// with AMX, one core, V = 18.7k (the op alone, alternated, noisy): each flush re-reads and re-
// writes all of dW [V, K], and one flush of 900 rows ran 0-11 % faster than two, but a 2^25 bound
// holds 32 MB more at the RNN's largest batches, where its peak RSS already reaches Marian's 1.6 GB
// (161 steps of issue 29's bf16 run: 1,591 MB); larger chunks make the logits' product faster (219
// -> 323 GFLOP/s from 64 to 384 rows: x W^T re-reads W per chunk) but the loss kernel then reads
// the logits from beyond L2: 384-row chunks were ~8 % faster at K = 500 and 10-15 % slower at K =
// 256, so chunks stay at the smaller bound.
LinearCrossEntropySplit linear_cross_entropy_split(int64_t V, int64_t M) {
  const int64_t B = kernels::kBf16Rows;
  const auto blocks = [B](int64_t rows) { return std::max(B, (rows + B - 1) / B * B); };
  const auto ceil_div = [](int64_t a, int64_t b) { return (std::max<int64_t>(a, 1) + b - 1) / b; };
  V = std::max<int64_t>(V, 1);
  const int64_t most_chunk = std::max(B, kChunkLogits / V / B * B);
  const int64_t most_flush = std::max(most_chunk, kFlushEntries / V / B * B);
  const int64_t per_flush = blocks(ceil_div(M, ceil_div(M, most_flush)));
  const int64_t chunks = ceil_div(per_flush, most_chunk);
  const int64_t R = blocks(ceil_div(per_flush, chunks));
  return {R, chunks * R};
}

Var linear_cross_entropy(Var x, Var w, Var b, std::span<const int32_t> targets,
                         CrossEntropyOptions o, int64_t rows_per_chunk, int64_t rows_per_flush) {
  using kernels::bf16;
  const Shape &sx = x.shape(), &sw = w.shape();
  check(sw.rank() == 2 && sx.rank() >= 1 && sx.last() == sw[1], "linear_cross_entropy: x ", sx,
        " and W ", sw, " (W is [V, K])");
  const bool has_bias = b.valid();
  if (has_bias && (b.shape().rank() != 1 || b.shape()[0] != sw[0]))
    fail("linear_cross_entropy: bias ", b.shape(), " for W ", sw);
  const int64_t M = sx.rows(), V = sw[0], K = sw[1];
  check(static_cast<int64_t>(targets.size()) == M, "linear_cross_entropy: ", targets.size(),
        " targets for x ", sx, " (one per row)");
  check(o.label_smoothing >= 0.f && o.label_smoothing < 1.f,
        "linear_cross_entropy: label smoothing must be in [0, 1)");
  check(o.reduction != Reduction::None, "linear_cross_entropy: reduction none is not supported");
  Graph* G = &x.graph();
  const bool bf16_products = G->precision() == Precision::bf16;
  const bool dx_needed = x.requires_grad(), dw_needed = w.requires_grad(),
             db_needed = has_bias && b.requires_grad();
  const bool train = G->mode() == Mode::Train && (dx_needed || dw_needed || db_needed);
  std::span<int32_t> t = G->copy<int32_t>(targets);
  const float* X = x.value().data();
  const float* W = w.value().data();
  const float* bias = has_bias ? b.value().data() : nullptr;
  check(rows_per_chunk >= 0 && rows_per_chunk % kernels::kBf16Rows == 0,
        "linear_cross_entropy: chunks of ", rows_per_chunk, " rows (a multiple of ",
        kernels::kBf16Rows, ")");
  const LinearCrossEntropySplit split = linear_cross_entropy_split(V, M);
  const int64_t R = rows_per_chunk > 0 ? rows_per_chunk : split.chunk_rows;
  check(rows_per_flush >= 0 && rows_per_flush % R == 0, "linear_cross_entropy: flushes every ",
        rows_per_flush, " rows (a multiple of the chunks' ", R, ")");
  // rows of dz per flush, whole chunks: F
  const int64_t F = rows_per_flush > 0   ? rows_per_flush
                    : rows_per_chunk > 0 ? flush_rows_for(V, R)
                                         : split.flush_rows;
  // bf16 copies of x [Mp, K] and W [V, K], made once, as for linear(): x's rows padded with zeros
  // to a multiple of kBf16Rows — not of R, which for a small vocabulary is tens of thousands of
  // rows (padded to R, a G2P batch's dW summed over 23x its rows of zeros)
  const int64_t Mp = kernels::bf16_padded_rows(M);
  std::optional<Bf16Product> prod;
  const bf16 *xb = nullptr, *wb = nullptr;
  bf16* zb = nullptr;
  if (bf16_products) {
    prod.emplace(x, w);
    xb = prod->xb;
    wb = prod->wb;
    // bf16(dz) of up to F rows [min(F, Mp), V]: dx and dW are one product each per F rows,
    // instead of one per chunk — per chunk, dW's rank-R update re-read and re-wrote the whole
    // [V, K] fp32 gradient (a memory-bound product: on a Xeon with AMX, 40 % of the bf16
    // Transformer's products at V = 18.7k); the chunked logits stay fp32. Bounded by F, not by
    // the batch: one buffer for all of [Mp, V] lifted the RNN's peak memory by 0.4 GB.
    if (train && (dx_needed || dw_needed))
      zb = G->arena().array<bf16>(static_cast<size_t>(std::min(F, Mp) * V));
  }
  const int64_t Rz = std::min(R, M);                                // rows of a chunk at most
  float* z = G->arena().array<float>(static_cast<size_t>(Rz * V));  // logits, then dz [Rz, V]
  // softmax [Rz, V], for the loss alone (training computes dz in place of the logits)
  float* p = train ? nullptr : G->arena().array<float>(static_cast<size_t>(Rz * V));
  // unscaled gradients: sum over the chunks of dz-products
  float* dx = train && dx_needed ? G->arena().array<float>(static_cast<size_t>(M * K)) : nullptr;
  float* dw = train && dw_needed ? G->arena().array<float>(static_cast<size_t>(V * K)) : nullptr;
  float* db = train && db_needed ? G->arena().array<float>(static_cast<size_t>(V)) : nullptr;
  if (db) std::fill(db, db + V, 0.f);
  double total = 0;
  int64_t count = 0;
  for (int64_t i = 0; i < M; i += R) {
    const int64_t r = std::min(R, M - i);
    // z [r, V] = x_r W^T + b
    if (bf16_products) {
      kernels::gemm_bf16(false, true, r, V, K, xb + i * K, K, wb, K, 0.f, z, V, bias);
    } else {
      if (bias) kernels::preload_rows(bias, r, V, z, false);
      kernels::gemm(false, true, r, V, K, 1.f, X + i * K, K, W, K, bias ? 1.f : 0.f, z, V);
    }
    int64_t n = 0;
    if (!train) {
      total += kernels::cross_entropy_forward(z, r, V, t.data() + i, o.ignore_index,
                                              o.label_smoothing, p, &n);
      count += n;
      continue;
    }
    // the loss and dz [r, V] = p - q (the rows of ignored targets 0) in one pass over the
    // logits: in bf16, rounded straight into this chunk's place in the flush buffer
    const int64_t b0 = i / F * F;  // the flush block's first row
    bf16* zrow = zb ? zb + (i - b0) * V : nullptr;
    total += kernels::cross_entropy_with_grad(z, r, V, t.data() + i, o.ignore_index,
                                              o.label_smoothing, zrow, db, &n);
    count += n;
    if (zb) {
      if (i + R >= b0 + F || i + r == M) {  // the block's last chunk: its products
        // rows past the batch's last are 0 (only the last block has any)
        const int64_t rows = i + r - b0, padded = kernels::bf16_padded_rows(rows);
        std::fill(zb + rows * V, zb + padded * V, bf16{0});
        if (dx)  // dx [rows, K] = dz W
          kernels::gemm_bf16(false, false, rows, K, V, zb, V, wb, K, 0.f, dx + b0 * K, K);
        if (dw)  // dW [V, K] (+)= dz^T [V, padded] x [padded, K] (padded rows 0 in both)
          kernels::gemm_bf16(true, false, V, K, padded, zb, V, xb + b0 * K, K, b0 == 0 ? 0.f : 1.f,
                             dw, K);
      }
    } else if (!bf16_products) {
      const float beta = i == 0 ? 0.f : 1.f;
      if (dx) kernels::gemm(false, false, r, K, V, 1.f, z, V, W, K, 0.f, dx + i * K, K);
      if (dw) kernels::gemm(true, false, V, K, r, 1.f, z, V, X + i * K, K, beta, dw, K);
    }
  }
  const float scale =
      o.reduction == Reduction::Mean ? 1.f / static_cast<float>(std::max<int64_t>(count, 1)) : 1.f;
  Tensor loss = G->alloc(Shape{});
  loss.data()[0] = static_cast<float>(total * scale);
  const Var inputs[3] = {x, w, b};
  return G->make(loss, std::span<const Var>(inputs, has_bias ? 3 : 2), [=](const Tensor& dl) {
    check(train, "linear_cross_entropy: backward through an inference graph");
    const float s = dl.data()[0] * scale;
    if (dx) {
      Var::GradTarget g = x.grad_target();
      scaled_into(g.data, g.beta, dx, s, M * K);
    }
    if (dw) {
      Var::GradTarget g = w.grad_target();
      scaled_into(g.data, g.beta, dw, s, V * K);
    }
    if (db) {
      Var::GradTarget g = b.grad_target();
      scaled_into(g.data, g.beta, db, s, V);
    }
  });
}

}  // namespace heed
