// Reductions along one axis of a tensor seen as [outer, n, inner]: sum and max (with argmax);
// and the k largest entries of a row (beam search).
// Leaves out: multi-axis reductions (compose them).
#pragma once

#include <cstdint>

namespace heed::kernels {

// y[o, i] = sum_k x[o, k, i]
void sum_axis(const float* x, float* y, int64_t outer, int64_t n, int64_t inner);
// dx[o, k, i] += dy[o, i]
void sum_axis_backward(const float* dy, float* dx, int64_t outer, int64_t n, int64_t inner);
// y[o, i] = max_k x[o, k, i], arg[o, i] = the first k attaining it
void max_axis(const float* x, float* y, int32_t* arg, int64_t outer, int64_t n, int64_t inner);
// dx[o, arg[o, i], i] += dy[o, i]
void max_axis_backward(const float* dy, const int32_t* arg, float* dx, int64_t outer, int64_t n,
                       int64_t inner);

// The indices of the k largest of x[0..n) (k <= n), largest first, ties by lower index: the
// order of a stable sort by descending value. One pass that skips each block of 64 whose
// maximum does not beat the current k-th (most of a vocabulary row once k are found).
void top_k(const float* x, int64_t n, int64_t k, int32_t* idx);

// The same over a row read in blocks, in order (a block's entry j is the row's offset + j), the
// row never whole in memory: `filled` of the k best so far in ids and values, as top_k orders them
// (after the last block: top_k's indices of the whole row).
struct TopK {
  int64_t k;
  int32_t* ids;   // [k]
  float* values;  // [k]
  int64_t filled = 0;
  void add(const float* x, int64_t n, int32_t offset);
  // Whether a block whose largest entry is `block_max` can change the k best (add() would skip
  // it entry by entry otherwise: only entries greater than the k-th enter).
  bool can_enter(float block_max) const { return filled < k || block_max > values[k - 1]; }
};

}  // namespace heed::kernels
