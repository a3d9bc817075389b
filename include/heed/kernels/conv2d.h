// Two-dimensional convolution without padding, channels last, by im2col and one GEMM (the
// front end of a speech recognizer: ESPnet's and the Speech-Transformer's two 3x3 stride-2
// convolutions over time and frequency):
//   y[b, i, j, o] = bias[o] + sum_{p < k} sum_{q < k} sum_c w[o, (p k + q) C_in + c]
//                                                      x[b, i s + p, j s + q, c]
// x [B, H, W, C_in] -> y [B, H', W', C_out], H' = (H - k) / s + 1, W' = (W - k) / s + 1.
// The patches are gathered into cols [B H' W', k k C_in] (kept for the backward), then
//   y = cols w^T + bias,   dw += dy^T cols,   dbias += sum dy,   dx += col2im(dy w).
// Leaves out: padding, dilation and groups (not needed by the front ends), and the graph
// (autograd/ops/conv2d.h).
#pragma once

#include <cstdint>

namespace heed::kernels {

struct Conv2dShape {
  int64_t B = 0, H = 0, W = 0, C_in = 0, C_out = 0;
  int64_t k = 3, stride = 2;
  int64_t H_out() const { return (H - k) / stride + 1; }
  int64_t W_out() const { return (W - k) / stride + 1; }
  int64_t rows() const { return B * H_out() * W_out(); }  // of cols and y
  int64_t patch() const { return k * k * C_in; }          // columns of cols
};

// cols [rows, patch] <- the patches of x
void im2col(const Conv2dShape& s, const float* x, float* cols);
// dx [B, H, W, C_in] += the patches' gradients dcols [rows, patch]
void col2im_add(const Conv2dShape& s, const float* dcols, float* dx);

// y [rows, C_out] = cols w^T + bias (bias may be null); cols filled from x
void conv2d_forward(const Conv2dShape& s, const float* x, const float* w, const float* bias,
                    float* y, float* cols);
// The gradients of the non-null dx, dw, dbias (accumulated: +=); dcols [rows, patch] scratch
void conv2d_backward(const Conv2dShape& s, const float* cols, const float* w, const float* dy,
                     float* dx, float* dw, float* dbias, float* dcols);

}  // namespace heed::kernels
