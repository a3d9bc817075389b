// The exact argmax of an fp32 output layer through an int8 screen (see the header).
#include "heed/kernels/argmax_screen.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "heed/kernels/vmath.h"
#include "heed/util/error.h"

namespace heed::kernels {
namespace {

// ||a - s q||_2 and ||s q||_2 of a row and its quantization, in double
void row_norms(const float* a, const int8_t* q, float s, int64_t K, double* error, double* norm) {
  double e = 0, n = 0;
  for (int64_t k = 0; k < K; ++k) {
    const double t = static_cast<double>(s) * q[k];
    e += (a[k] - t) * (a[k] - t);
    n += t * t;
  }
  *error = std::sqrt(e);
  *norm = std::sqrt(n);
}

// ||a||_2 in double
double l2_norm(const float* a, int64_t K) {
  double n = 0;
  for (int64_t k = 0; k < K; ++k) n += static_cast<double>(a[k]) * a[k];
  return std::sqrt(n);
}

// a float not below x (x >= 0): the bounds only ever round up
float up(double x) {
  return std::nextafter(static_cast<float>(x), std::numeric_limits<float>::infinity());
}

}  // namespace

bool argmax_screen_available() {
  return int8_packed_kernel();
}

ArgmaxScreen make_argmax_screen(const float* w, int64_t N, int64_t K) {
  ArgmaxScreen s{quantize_matrix(w, N, K), std::vector<float>(static_cast<size_t>(N)),
                 std::vector<float>(static_cast<size_t>(N))};
  for (int64_t n = 0; n < N; ++n) {
    double error = 0, unused = 0;  // (the norm of the quantized row: not needed here)
    row_norms(w + n * K, s.q.q.data() + n * K, s.q.scale[static_cast<size_t>(n)], K, &error,
              &unused);
    s.norm[static_cast<size_t>(n)] = up(l2_norm(w + n * K, K));
    s.error[static_cast<size_t>(n)] = up(error);
  }
  s.q.q = {};  // the packed copy is what the kernel reads
  return s;
}

void dot_rows(const float* x, const float* w, int64_t K, const float* b, int64_t n0, int64_t n,
              float* z) {
  int64_t i = 0;
  if (K % 16 == 0)
    for (; i + 4 <= n; i += 4) vmath::dot4(x, 0, w + (n0 + i) * K, K, K, z + i);
  for (; i < n; ++i) z[i] = vmath::dot(x, w + (n0 + i) * K, K);
  if (b)
    for (i = 0; i < n; ++i) z[i] += b[n0 + i];
}

bool screened_argmax(const float* x, const float* w, const float* b, const ArgmaxScreen& s,
                     int64_t first, const ScreenScratch& scratch, int32_t* id, float* value,
                     int64_t* read) {
  const int64_t N = s.q.rows, K = s.q.cols;
  check(first >= 0 && first < N, "screened_argmax: columns from ", first, " of ", N);
  float sx = 0;
  quantize_rows(x, 1, K, scratch.qx, &sx);
  double dx = 0, nx = 0;  // ||x - x~||, ||x~||
  row_norms(x, scratch.qx, sx, K, &dx, &nx);
  const double norm_x = l2_norm(x, K);
  if (!std::isfinite(norm_x) || !std::isfinite(dx)) return false;
  // a_n, then e_n = ||dx|| ||w_n|| + ||x~|| ||dw_n|| + the fp32 sum's rounding, K 2^-24 ||x||
  // ||w_n|| (taken as 2K 2^-24), + the finish's and the bias's, 2^-21 |a_n| (a few ulps), + a
  // thousandth of all that for the bound's own float arithmetic (a handful of roundings)
  gemm_int8_columns(1, scratch.qx, &sx, s.q, 0, N, b, scratch.acc, scratch.approx, N);
  const float cw = up(dx + 2.0 * static_cast<double>(K) * 0x1p-24 * norm_x), ce = up(nx);
  float* a = scratch.approx;  // a_n, then a_n + e_n
  const float* norm = s.norm.data();
  const float* error = s.error.data();
  float lower = -std::numeric_limits<float>::infinity();  // L = max_n (a_n - e_n)
#pragma omp simd reduction(max : lower)
  for (int64_t n = first; n < N; ++n) {
    const float e = (cw * norm[n] + ce * error[n] + 0x1p-21f * std::fabs(a[n])) * 1.001f;
    const float lo = a[n] - e;
    lower = lo > lower ? lo : lower;
    a[n] += e;
  }
  if (!std::isfinite(lower)) return false;
  int64_t best = -1, reads = 0;
  float best_z = 0;
  for (int64_t n = first; n < N; ++n) {
    if (a[n] < lower) continue;  // below the best lower bound: not the argmax
    float z = 0;
    dot_rows(x, w, K, b, n, 1, &z);
    ++reads;
    if (best < 0 || z > best_z) {  // ascending n: a tie keeps the lower id
      best = n;
      best_z = z;
    }
  }
  if (best < 0) return false;  // (a NaN in the bounds)
  *id = static_cast<int32_t>(best);
  *value = best_z;
  if (read) *read = reads;
  return true;
}

}  // namespace heed::kernels
