// The exact argmax of an fp32 output layer through an int8 screen.
// Leaves out: the log-sum-exp (a screened read finds the best entry only: a greedy search that
// reports no scores), several rows at once beyond a loop, and CPUs without heed's int8 kernel.
//
// At a decoding step's one row, z = x W^T + b is a matrix-vector product bound by the bytes of
// W it reads (W [7,859, 128] of the Multi30k Transformer: 4 MB a step, from L3). W quantized per
// row (1 MB) gives every z_n to within a bound, and only the rows whose bound reaches the best
// lower bound are read in fp32:
//   x = x~ + dx (x~ = s_x q_x),  w_n = w~_n + dw_n (w~_n = s_n q_n), a_n = w~_n . x~ + b_n:
//   |w_n . x - w~_n . x~| = |w_n . dx + dw_n . x~| <= ||dx|| ||w_n|| + ||x~|| ||dw_n||
// (Cauchy-Schwarz), plus the rounding of the fp32 sum (K 2^-24 sum_k |x_k w_nk| <=
// K 2^-24 ||x|| ||w_n||) and of the int8 product's finish, so e_n bounds |z_n - a_n|. A row with
// a_n + e_n < L = max_m (a_m - e_m) has z_n < z_m for the m at L: it is not the argmax. The
// candidates left are read exactly (vmath::dot, the floats of the unscreened read at these row
// counts), so the argmax and its value are those of the whole layer, ties to the lower id.
#pragma once

#include <cstdint>
#include <vector>

#include "heed/kernels/quantize.h"

namespace heed::kernels {

struct ArgmaxScreen {
  Int8Matrix q;              // W [N, K] quantized per row (heed's packed kernel's layout)
  std::vector<float> norm;   // ||w_n||_2, rounded up  [N]
  std::vector<float> error;  // ||w_n - s_n q_n||_2, rounded up  [N]
};
// Whether this build and CPU screen at all (heed's own int8 kernel: elsewhere the int8 product
// costs what the fp32 one does).
bool argmax_screen_available();
ArgmaxScreen make_argmax_screen(const float* w, int64_t N, int64_t K);

// Scratch for screened_argmax (a graph's arena, say).
struct ScreenScratch {
  int8_t* qx;     // [K]
  int32_t* acc;   // [N]
  float* approx;  // a_n [N]
};

// The argmax of z = x [K] W^T + b (b may be null) over columns first..N-1 (ties: the lower id)
// into *id and its z into *value, z_n being vmath::dot(x, w_n, K) + b_n. Returns false, writing
// nothing, when x is not finite (no bound holds): the caller reads the layer whole. *read: the
// number of rows read in fp32 (for tests and profiles; may be null).
bool screened_argmax(const float* x, const float* w, const float* b, const ArgmaxScreen& s,
                     int64_t first, const ScreenScratch& scratch, int32_t* id, float* value,
                     int64_t* read = nullptr);

// z_n = vmath::dot(x, w_n, K) + b_n for n in n0..n0 + n - 1 into z [n]: the fp32 read the screen
// stands for (four rows at a time when K is a multiple of 16: vmath::dot4, the same floats).
void dot_rows(const float* x, const float* w, int64_t K, const float* b, int64_t n0, int64_t n,
              float* z);

}  // namespace heed::kernels
