// Row-wise softmax / log-softmax with an optional additive mask, and the fused softmax
// cross-entropy with ignore-index and label smoothing.
// Leaves out: softmax over other axes (permute first) and the attention kernel (its own file).
#pragma once

#include <cstdint>
#include <limits>

#include "heed/kernels/bf16.h"
#include "heed/tensor/shape.h"

namespace heed::kernels {

// An additive mask broadcast to the input's shape (nullptr: none). Entries are 0 or -inf
// (or any finite bias); a row whose every entry is -inf gives all-zero probabilities.
struct RowMask {
  const float* data = nullptr;
  Shape shape;
};

// y = softmax(x + mask) or log_softmax(x + mask) over the last axis of `shape`.
void softmax_forward(const float* x, const RowMask& mask, float* y, const Shape& shape, bool log);
// log sum_j exp(x_j) over one row of n, as log_softmax computes it: m + log sum_j exp(x_j - m),
// m = max_j x_j (m itself when that is -inf: every entry -inf). A log-softmax row is then
// log p_j = x_j - log_sum_exp(x, n), for readers of a few of its entries (beam search's best
// k) that need not write the row.
float log_sum_exp(const float* x, int64_t n);
// The same with m = max_j x_j already known (a reader that has searched the row for its best
// entries): one pass over the row instead of two, the same float.
float log_sum_exp(const float* x, int64_t n, float max);
// log sum_j exp(x_j) of a row read in blocks (never whole in memory): the running maximum m and
// s = sum exp(x_j - m) so far; a block with a larger maximum m' rescales s by exp(m - m'). The
// same value as log_sum_exp to float rounding (the sums are grouped by block). add() returns the
// block's own maximum (a reader of the same block may use it: TopK::can_enter).
struct LogSumExp {
  float max = -std::numeric_limits<float>::infinity();
  float sum = 0.f;
  float add(const float* x, int64_t n);
  float value() const;
};
// softmax:     dx += y * (dy - sum(dy * y))
// log-softmax: dx += dy - exp(y) * sum(dy)     (0 where y = -inf: masked entries)
void softmax_backward(const float* y, const float* dy, float* dx, const Shape& shape, bool log);

// Smoothed cross-entropy (Szegedy et al. 2016): q = (1 - eps) onehot(t) + eps / V,
//   loss_n = -sum_v q_v log p_v,  p = softmax(logits_n). Rows whose target is `ignore` count 0.
// Writes p to probs [N, V] for the backward; returns the sum over rows and sets *count.
double cross_entropy_forward(const float* logits, int64_t N, int64_t V, const int32_t* targets,
                             int32_t ignore, float eps, float* probs, int64_t* count);
// dlogits += scale * (p - q)
void cross_entropy_backward(const float* probs, int64_t N, int64_t V, const int32_t* targets,
                            int32_t ignore, float eps, float scale, float* dlogits);
// Both at once for a training step's chunk of logits, with no probabilities held: returns the
// loss summed over rows (and sets *count) as cross_entropy_forward, and writes dz = p - q,
// unscaled, over the logits in place (dz_bf16 null) or rounded into dz_bf16 [N, V] (z is then
// scratch); rows of ignored targets get 0. With db, also db [V] += sum over rows of dz.
double cross_entropy_with_grad(float* z, int64_t N, int64_t V, const int32_t* targets,
                               int32_t ignore, float eps, bf16* dz_bf16, float* db, int64_t* count);

}  // namespace heed::kernels
