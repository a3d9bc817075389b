// One-dimensional convolution over time, channels last (seed 001, section 3: causal CNNs):
//   y[b, t, o] = bias[o] + sum_{i < k} sum_c w[o, i, c] x[b, t + off_i, c]
// with the tap offsets off_i = (i - (k - 1)) d (causal: output t reads t and the past only,
// the left padding (k - 1) d) or (i - (k - 1) / 2) d (centred, k odd: as much past as future).
// Entries outside [0, len_b) read as zero, so a padded batch convolves each sequence alone.
// Computed as GEMMs over shifted views: the taps gathered into columns (im2col) [B T, k C_in],
// one GEMM with w [C_out, k C_in]; the backward is the two transposed GEMMs and the scatter of
// the column gradients back onto the input.
// Leaves out: strides and groups (not needed by the models), and the graph (autograd/ops).
#pragma once

#include <cstdint>
#include <span>

namespace heed::kernels {

struct Conv1dShape {
  int64_t B = 0, T = 0, C_in = 0, C_out = 0;
  int64_t k = 1, dilation = 1;
  bool causal = true;
  std::span<const int32_t> lengths{};  // [B] real lengths (empty: all T)

  int64_t offset(int64_t tap) const {  // off_i
    return (tap - (causal ? k - 1 : (k - 1) / 2)) * dilation;
  }
  int64_t length(int64_t b) const { return lengths.empty() ? T : lengths[b]; }
};

// The columns [B T, k C_in]: row (b, t), block i = x[b, t + off_i, :] or 0.
void conv1d_columns(const Conv1dShape& s, const float* x, float* cols);
// y [B T, C_out] = cols w^T + bias (bias may be null).
void conv1d_forward(const Conv1dShape& s, const float* cols, const float* w, const float* bias,
                    float* y);
// dw [C_out, k C_in] += dy^T cols; dbias [C_out] += sum over rows of dy (either may be null);
// dx [B T, C_in] += the columns' gradient dy w scattered back (dx null: none). `scratch` holds
// B T k C_in floats.
void conv1d_backward(const Conv1dShape& s, const float* cols, const float* w, const float* dy,
                     float* dx, float* dw, float* dbias, float* scratch);

}  // namespace heed::kernels
