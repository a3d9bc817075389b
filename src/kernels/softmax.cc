// Softmax, log-softmax and softmax cross-entropy kernels, threaded over rows.
// Leaves out: tiling over the vocabulary axis; rows fit in cache at NMT vocabulary sizes.
#include "heed/kernels/softmax.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "heed/kernels/broadcast.h"
#include "heed/kernels/parallel.h"
#include "heed/kernels/vmath.h"
#include "heed/util/error.h"

namespace heed::kernels {
namespace {
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// One row's smoothed cross-entropy, with t a valid target: e [V] = exp(x - max(x)) (e may be x
// itself), *inv = 1 / sum(e) so that p = e * inv; returns
//   -sum_v q_v log p_v = -(1 - eps)(x_t - lse) - eps/V * (sum_v x_v - V lse)
double smoothed_row_loss(const float* x, float* e, int64_t V, int32_t t, float eps, float* inv) {
  const float m = vmath::max(x, V, x[0]), x_t = x[t];
  float s = 0.f, sum_x = 0.f;
#pragma omp simd reduction(+ : s, sum_x)
  for (int64_t j = 0; j < V; ++j) {
    sum_x += x[j];
    e[j] = vmath::exp(x[j] - m);
    s += e[j];
  }
  // cppcheck-suppress invalidFunctionArg ; s >= 1: the maximum contributes exp(0) = 1
  const float lse = m + std::log(s);
  *inv = 1.f / s;
  return (1.0 - eps) * -(x_t - lse) + eps * -(sum_x / static_cast<double>(V) - lse);
}
}  // namespace

namespace {
// m + log sum_j exp(x_j - m), m the row's maximum (finite)
float sum_exp_log(const float* x, int64_t n, float m) {
  // cppcheck-suppress invalidFunctionArg ; s >= 1: the maximum contributes exp(0) = 1
  return m + std::log(vmath::sum_exp(x, n, m));
}
}  // namespace

float log_sum_exp(const float* x, int64_t n) {
  return log_sum_exp(x, n, vmath::max(x, n, kNegInf));
}

float log_sum_exp(const float* x, int64_t n, float max) {
  return max == kNegInf ? max : sum_exp_log(x, n, max);
}

float LogSumExp::add(const float* x, int64_t n) {
  const float block = vmath::max(x, n, kNegInf), m = std::max(block, max);
  if (m == kNegInf) return block;                                  // nothing but -inf so far
  if (m > max) sum *= max == kNegInf ? 0.f : vmath::exp(max - m);  // rescaled to the new max
  max = m;
  sum += vmath::sum_exp(x, n, m);
  return block;
}

float LogSumExp::value() const {
  return max == kNegInf ? max : max + std::log(sum);
}

void softmax_forward(const float* x, const RowMask& mask, float* y, const Shape& shape, bool log) {
  int64_t n = shape.last(), rows = shape.rows();
  if (n == 0) return;
  Shape o = shape.padded(4);
  std::array<int64_t, 4> ms{};
  if (mask.data) {
    check(mask.shape.last() == n, "softmax: mask ", mask.shape, " must match the last axis of ",
          shape);
    ms = broadcast_strides(mask.shape, shape);
  }
  parallel_for(rows, grain_for(4096, n), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const float* xr = x + r * n;
      float* yr = y + r * n;
      const float* mr = mask.data ? mask.data + broadcast_row_offset(r, o, ms) : nullptr;
      if (mr) {
        for (int64_t j = 0; j < n; ++j) yr[j] = xr[j] + mr[j];
        xr = yr;
      }
      const float m = vmath::max(xr, n, kNegInf);
      if (m == kNegInf) {  // every entry masked: no distribution, no gradient
        for (int64_t j = 0; j < n; ++j) yr[j] = log ? kNegInf : 0.f;
        continue;
      }
      float s = 0.f;
      if (log) {
        const float lse = sum_exp_log(xr, n, m);
        for (int64_t j = 0; j < n; ++j) yr[j] = xr[j] - lse;
      } else {
#pragma omp simd reduction(+ : s)
        for (int64_t j = 0; j < n; ++j) {
          yr[j] = vmath::exp(xr[j] - m);
          s += yr[j];
        }
        float inv = 1.f / s;
#pragma omp simd
        for (int64_t j = 0; j < n; ++j) yr[j] *= inv;
      }
    }
  });
}

void softmax_backward(const float* y, const float* dy, float* dx, const Shape& shape, bool log) {
  int64_t n = shape.last(), rows = shape.rows();
  parallel_for(rows, grain_for(4096, n), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const float *yr = y + r * n, *gr = dy + r * n;
      float* dr = dx + r * n;
      float s = 0.f;
      if (log) {
        for (int64_t j = 0; j < n; ++j) s += yr[j] == kNegInf ? 0.f : gr[j];
        for (int64_t j = 0; j < n; ++j)
          dr[j] += yr[j] == kNegInf ? 0.f : gr[j] - vmath::exp(yr[j]) * s;
      } else {
#pragma omp simd reduction(+ : s)
        for (int64_t j = 0; j < n; ++j) s += gr[j] * yr[j];
#pragma omp simd
        for (int64_t j = 0; j < n; ++j) dr[j] += yr[j] * (gr[j] - s);
      }
    }
  });
}

double cross_entropy_forward(const float* logits, int64_t N, int64_t V, const int32_t* targets,
                             int32_t ignore, float eps, float* probs, int64_t* count) {
  check(V > 0, "cross_entropy: empty vocabulary axis");
  double total = 0;
  int64_t kept = 0;
  bool bad = false;
#pragma omp parallel for reduction(+ : total, kept) reduction(|| : bad) if (N * V > 32768)
  for (int64_t r = 0; r < N; ++r) {
    const float* x = logits + r * V;
    float* p = probs + r * V;
    int32_t t = targets[r];
    if (t == ignore) {
      for (int64_t j = 0; j < V; ++j) p[j] = 0.f;
      continue;
    }
    if (t < 0 || t >= V) {
      bad = true;
      continue;
    }
    float inv = 0.f;
    total += smoothed_row_loss(x, p, V, t, eps, &inv);
#pragma omp simd
    for (int64_t j = 0; j < V; ++j) p[j] *= inv;
    ++kept;
  }
  check(!bad, "cross_entropy: a target id is outside [0, ", V, ")");
  *count = kept;
  return total;
}

void cross_entropy_backward(const float* probs, int64_t N, int64_t V, const int32_t* targets,
                            int32_t ignore, float eps, float scale, float* dlogits) {
  float off = eps / static_cast<float>(V);
  parallel_for(N, grain_for(32768, V), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      int32_t t = targets[r];
      if (t == ignore) continue;
      const float* p = probs + r * V;
      float* d = dlogits + r * V;
#pragma omp simd
      for (int64_t j = 0; j < V; ++j) d[j] += scale * (p[j] - off);
      d[t] -= scale * (1.f - eps);
    }
  });
}

double cross_entropy_with_grad(float* z, int64_t N, int64_t V, const int32_t* targets,
                               int32_t ignore, float eps, bf16* dz_bf16, float* db,
                               int64_t* count) {
  check(V > 0, "cross_entropy: empty vocabulary axis");
  const float off = eps / static_cast<float>(V), hit = 1.f - eps;
  double total = 0;
  int64_t kept = 0;
  bool bad = false;
#pragma omp parallel reduction(+ : total, kept) reduction(|| : bad) if (N * V > 32768)
  {
    // db's sums: into db itself on one thread, else a row of this thread's own, added at the end
    std::vector<float> own;
    float* acc = db;
    if (db && omp_get_num_threads() > 1) {
      own.assign(static_cast<size_t>(V), 0.f);
      acc = own.data();
    }
#pragma omp for schedule(static)
    for (int64_t r = 0; r < N; ++r) {
      float* x = z + r * V;
      bf16* d = dz_bf16 ? dz_bf16 + r * V : nullptr;
      const int32_t t = targets[r];
      if (t == ignore || t < 0 || t >= V) {
        bad = bad || t != ignore;
        if (d)
          std::fill(d, d + V, bf16{0});
        else
          std::fill(x, x + V, 0.f);
        continue;
      }
      // e = exp(x - max) over the row, in place (it stays in cache for the passes below)
      float* e = x;
      float inv = 0.f;
      total += smoothed_row_loss(x, e, V, t, eps, &inv);
      ++kept;
      // dz_j = p_j - q_j = e_j / s - eps / V - [j = t] (1 - eps): cross_entropy_backward's values.
      // Passes over the row (in cache) that each vectorise: one loop doing all, or selecting j = t
      // inside, did not.
#pragma omp simd
      for (int64_t j = 0; j < V; ++j) e[j] = e[j] * inv - off;
      e[t] -= hit;
      if (d) {
#pragma omp simd
        for (int64_t j = 0; j < V; ++j) d[j] = to_bf16(e[j]);
      }
      if (acc) {
#pragma omp simd
        for (int64_t j = 0; j < V; ++j) acc[j] += e[j];
      }
    }
    if (acc && acc != db) {
#pragma omp critical(heed_cross_entropy_db)
      for (int64_t j = 0; j < V; ++j) db[j] += acc[j];
    }
  }
  check(!bad, "cross_entropy: a target id is outside [0, ", V, ")");
  *count = kept;
  return total;
}

}  // namespace heed::kernels
