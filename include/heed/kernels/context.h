// The context vector of an RNN attention step (Bahdanau et al. 2015, eq. 5), fused:
//   c_b = sum_j alpha_bj h_bj                      [B, D]
// and its backward in one pass over the memory:
//   dalpha_bj += dc_b . h_bj,   dh_bj += alpha_bj dc_b
// (a batched GEMM of one row per sentence costs more to enter than it computes, and its
// backward read the memory twice). Weights of exactly 0 (padding, frames outside a window) are
// skipped; rows b run in parallel, each owning its outputs, so results do not depend on the
// thread count.
// Leaves out: the weights themselves (nn/attention/).
#pragma once

#include <cstdint>

namespace heed::kernels {

// alpha [B, S], h [B, S, D] -> c [B, D]
void context_forward(int64_t B, int64_t S, int64_t D, const float* alpha, const float* h, float* c);
// += the gradients for dc [B, D]; dalpha or dh may be null (not wanted)
void context_backward(int64_t B, int64_t S, int64_t D, const float* alpha, const float* h,
                      const float* dc, float* dalpha, float* dh);

}  // namespace heed::kernels
