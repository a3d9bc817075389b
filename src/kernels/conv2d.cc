// Two-dimensional convolution by im2col and one GEMM (see the header).
#include "heed/kernels/conv2d.h"

#include <cstring>

#include "heed/kernels/gemm.h"

namespace heed::kernels {

void im2col(const Conv2dShape& s, const float* x, float* cols) {
  const int64_t Ho = s.H_out(), Wo = s.W_out(), P = s.patch(), C = s.C_in;
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t b = 0; b < s.B; ++b)
    for (int64_t i = 0; i < Ho; ++i)
      for (int64_t j = 0; j < Wo; ++j) {
        float* row = cols + ((b * Ho + i) * Wo + j) * P;
        for (int64_t p = 0; p < s.k; ++p) {
          // the k taps of row i s + p, from column j s: k C contiguous floats
          const float* src = x + ((b * s.H + i * s.stride + p) * s.W + j * s.stride) * C;
          std::memcpy(row + p * s.k * C, src, static_cast<size_t>(s.k * C) * sizeof(float));
        }
      }
}

void col2im_add(const Conv2dShape& s, const float* dcols, float* dx) {
  const int64_t Ho = s.H_out(), Wo = s.W_out(), P = s.patch(), C = s.C_in;
  // patches overlap (stride < k): sequential in i and j within a sequence, parallel over b
#pragma omp parallel for schedule(static)
  for (int64_t b = 0; b < s.B; ++b)
    for (int64_t i = 0; i < Ho; ++i)
      for (int64_t j = 0; j < Wo; ++j) {
        const float* row = dcols + ((b * Ho + i) * Wo + j) * P;
        for (int64_t p = 0; p < s.k; ++p) {
          float* dst = dx + ((b * s.H + i * s.stride + p) * s.W + j * s.stride) * C;
          const float* src = row + p * s.k * C;
          for (int64_t e = 0; e < s.k * C; ++e) dst[e] += src[e];
        }
      }
}

void conv2d_forward(const Conv2dShape& s, const float* x, const float* w, const float* bias,
                    float* y, float* cols) {
  const int64_t R = s.rows(), P = s.patch(), O = s.C_out;
  im2col(s, x, cols);
  if (bias != nullptr) {
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < R; ++r)
      std::memcpy(y + r * O, bias, static_cast<size_t>(O) * sizeof(float));
  }
  gemm(false, true, R, O, P, 1.f, cols, P, w, P, bias != nullptr ? 1.f : 0.f, y, O);
}

void conv2d_backward(const Conv2dShape& s, const float* cols, const float* w, const float* dy,
                     float* dx, float* dw, float* dbias, float* dcols) {
  const int64_t R = s.rows(), P = s.patch(), O = s.C_out;
  if (dw != nullptr) gemm(true, false, O, P, R, 1.f, dy, O, cols, P, 1.f, dw, P);
  if (dbias != nullptr)
    for (int64_t r = 0; r < R; ++r)
      for (int64_t o = 0; o < O; ++o) dbias[o] += dy[r * O + o];
  if (dx != nullptr) {
    gemm(false, false, R, P, O, 1.f, dy, O, w, P, 0.f, dcols, P);
    col2im_add(s, dcols, dx);
  }
}

}  // namespace heed::kernels
