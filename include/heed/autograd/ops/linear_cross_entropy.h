// The output layer and its loss in one op: cross_entropy(linear(x, W, b), targets) computed over
// chunks of rows, so that the logits [N, V] are never held whole. Each chunk's logits
// z = x_r W^T + b [R, V] give its loss terms and, in a training graph, at once its share of the
// gradients (dz = p - q, dx_r = dz W, dW += dz^T x_r, db += sum_r dz), kept unscaled [N, K] and
// [V, K] until the backward multiplies them by dloss / count. Memory: O(R V + N K + V K) in
// place of the unfused pair's three [N, V] tensors (logits, softmax, their gradient); the same
// three products. Mixed precision (Precision::bf16) as linear(): bf16 operands, fp32 sums; there
// the chunks' dz are kept in bf16 up to F rows ([F, V], F about 2^24 / V) and dx, dW are one
// product each per F rows (per chunk, dW's update re-read the whole [V, K] gradient).
// Leaves out: reduction none (one loss per row).
#pragma once

#include <span>

#include "heed/autograd/graph.h"
#include "heed/autograd/ops/loss.h"

namespace heed {

// x [..., K], W [V, K], b [V] (optional: an invalid Var), one target per row of x -> the
// scalar loss cross_entropy(linear(x, W, b), targets, opts) (reduction Mean or Sum).
// `chunk_rows`: rows per chunk, a multiple of kernels::kBf16Rows; `flush_rows`: in bf16, rows of dz
// per dx/dW product, a multiple of the chunk (0, 0: linear_cross_entropy_split's; a chunk given
// alone gets flushes of about 2^24 entries).
Var linear_cross_entropy(Var x, Var w, Var b, std::span<const int32_t> targets,
                         CrossEntropyOptions opts = {}, int64_t chunk_rows = 0,
                         int64_t flush_rows = 0);

// The default split of M rows of a V-word output layer: rows per chunk (at most about 2^21
// logits) and, in bf16, rows of dz per dx/dW product (about 2^24 entries at most, whole chunks);
// as few of each as fit, even, multiples of kernels::kBf16Rows.
struct LinearCrossEntropySplit {
  int64_t chunk_rows, flush_rows;
};
LinearCrossEntropySplit linear_cross_entropy_split(int64_t V, int64_t M);

}  // namespace heed
