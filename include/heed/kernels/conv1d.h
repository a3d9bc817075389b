// One-dimensional convolution over time, channels last (seed 001, section 3: causal CNNs):
//   y[b, t, o] = bias[o] + sum_{i < k} sum_c w[o, i, c] x[b, t + off_i, c]
// with the tap offsets off_i = (i - (k - 1)) d (causal: output t reads t and the past only,
// the left padding (k - 1) d) or (i - (k - 1) / 2) d (centred, k odd: as much past as future).
// Entries outside [0, len_b) read as zero, so a padded batch convolves each sequence alone.
//
// Computed as GEMMs over shifted views, one per tap: y[rows] += x[rows + off_i] w_i^T with w_i
// the tap's [C_out, C_in] block of w. Only the rows whose taps read real inputs are computed:
// for sequence b the outputs t < n_b = min(T, len_b + back) (back: the reach into the past);
// the rest read zeros alone and are the bias. Two plans of the same sum:
//   per sequence  each tap's GEMM on sequence b's own rows, straight on x and y (long
//                 sequences: B k products of hundreds of rows, no copies);
//   packed        short sequences packed one after another with G = (k - 1) d zero rows
//                 between them, so that one GEMM per tap covers the whole batch (Kim's
//                 sentences: 50 of 5-50 words) and no tap reads across a boundary; the
//                 padding rows of the batch are not computed at all.
// A one-channel signal (C_in = 1: location-aware attention's previous alignment) takes a third
// plan, direct: each output row is k multiply-adds of C_out lanes, with no GEMM at all (k GEMMs of
// one column each cost more to enter than they compute).
// The backward is the same GEMMs transposed: dw_i += dy^T x(shifted), dx(shifted) += dy w_i.
// In mixed precision the operands x, w and dy are rounded to bf16 once per call and every GEMM
// above runs as oneDNN's bf16 matmul, summing in fp32 (kernels/bf16.h).
// (Measured against the im2col form, one GEMM over the gathered taps [B T, k C_in], which this
// replaced: docs/RESULTS.md.)
// Leaves out: strides and groups (not needed by the models), and the graph (autograd/ops).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace heed::kernels {

struct Conv1dShape {
  int64_t B = 0, T = 0, C_in = 0, C_out = 0;
  int64_t k = 1, dilation = 1;
  bool causal = true;
  std::span<const int32_t> lengths{};  // [B] real lengths (empty: all T)

  int64_t offset(int64_t tap) const {  // off_i
    return (tap - back_taps()) * dilation;
  }
  int64_t back_taps() const { return causal ? k - 1 : (k - 1) / 2; }
  int64_t back() const { return back_taps() * dilation; }  // reach into the past
  int64_t length(int64_t b) const { return lengths.empty() ? T : lengths[b]; }
  // n_b: the outputs of sequence b that read a real input
  int64_t outputs(int64_t b) const;
};

struct Conv1dPlan {
  bool direct = false;  // C_in = 1, fp32: multiply-adds, no GEMM
  bool packed = false;
  bool bf16 = false;           // mixed precision: x, w and dy rounded to bf16 (kernels/bf16.h)
  int64_t G = 0, R = 0;        // packed: zero rows between sequences; rows in all
  std::vector<int64_t> start;  // packed: the first row of sequence b
  int64_t lo = 0, hi = 0;      // packed: the rows computed
};
constexpr int64_t kConv1dDirectWeights = 4096;  // direct: k C_out at most (its w^T on the stack)
// The plan for a shape (direct for one input channel in fp32; else packed when the per-sequence
// GEMMs would be short and packing wastes little); `force`: 0 choose, 1 per sequence, 2 packed,
// 3 direct (tests; where it applies). bf16: the products in mixed
// precision, the packed rows computed in multiples of 64 (few distinct shapes for oneDNN).
Conv1dPlan conv1d_plan(const Conv1dShape& s, int force = 0, bool bf16 = false);

// Scratch, in floats: kept from the forward for the backward (packed: x packed [R, C_in];
// bf16: x and w in bf16), and the forward's and the backward's own (packed: [R, C_out], and
// [R, C_out] + [R, C_in]; bf16: dy in bf16).
int64_t conv1d_kept_floats(const Conv1dShape& s, const Conv1dPlan& p);
int64_t conv1d_forward_floats(const Conv1dShape& s, const Conv1dPlan& p);
int64_t conv1d_backward_floats(const Conv1dShape& s, const Conv1dPlan& p);

// y [B T, C_out] = conv(x [B T, C_in]) + bias (bias may be null).
void conv1d_forward(const Conv1dShape& s, const Conv1dPlan& p, const float* x, const float* w,
                    const float* bias, float* y, float* kept, float* scratch);
// dw [C_out, k C_in] += ..., dbias [C_out] += sum over rows of dy, dx [B T, C_in] += ... (any
// of the three may be null); `kept` as the forward left it.
void conv1d_backward(const Conv1dShape& s, const Conv1dPlan& p, const float* x, const float* w,
                     const float* dy, float* dx, float* dw, float* dbias, const float* kept,
                     float* scratch);

}  // namespace heed::kernels
