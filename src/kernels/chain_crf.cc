// Segmentation attention's marginals: forward–backward of a two-state linear-chain CRF and its
// tangent pass (the equations are in the header).
#include "heed/kernels/chain_crf.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "heed/kernels/parallel.h"

namespace heed::kernels {
namespace {

double lse(double a, double b) {
  const double m = std::max(a, b);
  return m == -INFINITY ? m : m + std::log(std::exp(a - m) + std::exp(b - m));
}

// theta_j(s): the unary potential of z_j = s
double unary(const float* theta, int64_t j, int s) {
  return s ? theta[j] : 0.0;
}

}  // namespace

void chain_crf_forward(int64_t B, int64_t S, const float* theta, const float* A, const int32_t* len,
                       double* alpha, double* beta, double* logZ, float* mu) {
  parallel_for(B, grain_for(kSerialWork, 16 * S), [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      const float* th = theta + b * S;
      double* al = alpha + b * S * 2;  // [S][2]
      double* be = beta + b * S * 2;
      float* m = mu + b * S;
      const int64_t n = len[b];
      std::fill(m, m + S, 0.f);
      std::fill(al, al + S * 2, 0.0);
      std::fill(be, be + S * 2, 0.0);
      if (n == 0) {
        logZ[b] = 0;
        continue;
      }
      for (int s = 0; s < 2; ++s) al[s] = unary(th, 0, s);
      for (int64_t j = 1; j < n; ++j)
        for (int s = 0; s < 2; ++s)
          al[j * 2 + s] = unary(th, j, s) +
                          lse(al[(j - 1) * 2] + A[0 * 2 + s], al[(j - 1) * 2 + 1] + A[1 * 2 + s]);
      for (int64_t j = n - 2; j >= 0; --j)
        for (int s = 0; s < 2; ++s)
          be[j * 2 + s] = lse(A[s * 2 + 0] + unary(th, j + 1, 0) + be[(j + 1) * 2],
                              A[s * 2 + 1] + unary(th, j + 1, 1) + be[(j + 1) * 2 + 1]);
      logZ[b] = lse(al[(n - 1) * 2], al[(n - 1) * 2 + 1]);
      for (int64_t j = 0; j < n; ++j)
        m[j] = static_cast<float>(std::exp(al[j * 2 + 1] + be[j * 2 + 1] - logZ[b]));
    }
  });
}

void chain_crf_backward(int64_t B, int64_t S, const float* theta, const float* A,
                        const int32_t* len, const double* alpha, const double* beta,
                        const double* logZ, const float* mu, const float* dmu, float* dtheta,
                        float* dA) {
  std::vector<std::array<double, 4>> dA_rows(static_cast<size_t>(B), {0, 0, 0, 0});
  parallel_for(B, grain_for(kSerialWork, 32 * S), [&](int64_t b0, int64_t b1) {
    std::vector<double> da(static_cast<size_t>(S) * 2), db(static_cast<size_t>(S) * 2);
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t n = len[b];
      if (n == 0) continue;
      const float* th = theta + b * S;
      const float* g = dmu + b * S;
      const double* al = alpha + b * S * 2;
      const double* be = beta + b * S * 2;
      const double lz = logZ[b];
      auto dth = [&](int64_t j, int s) { return s ? static_cast<double>(g[j]) : 0.0; };
      // the tangents along g: dalpha forward, dbeta backward
      for (int s = 0; s < 2; ++s) da[s] = dth(0, s);
      for (int64_t j = 1; j < n; ++j)
        for (int s = 0; s < 2; ++s) {
          const double in = al[j * 2 + s] - unary(th, j, s);  // LSE_s' (alpha_j-1(s') + A[s'][s])
          double t = dth(j, s);
          for (int p = 0; p < 2; ++p)
            t += std::exp(al[(j - 1) * 2 + p] + A[p * 2 + s] - in) * da[(j - 1) * 2 + p];
          da[j * 2 + s] = t;
        }
      db[(n - 1) * 2] = db[(n - 1) * 2 + 1] = 0;
      for (int64_t j = n - 2; j >= 0; --j)
        for (int s = 0; s < 2; ++s) {
          double t = 0;
          for (int q = 0; q < 2; ++q)
            t +=
                std::exp(A[s * 2 + q] + unary(th, j + 1, q) + be[(j + 1) * 2 + q] - be[j * 2 + s]) *
                (dth(j + 1, q) + db[(j + 1) * 2 + q]);
          db[j * 2 + s] = t;
        }
      double dlz = 0;
      for (int s = 0; s < 2; ++s) dlz += std::exp(al[(n - 1) * 2 + s] - lz) * da[(n - 1) * 2 + s];
      for (int64_t j = 0; j < n; ++j)
        dtheta[b * S + j] +=
            static_cast<float>(mu[b * S + j] * (da[j * 2 + 1] + db[j * 2 + 1] - dlz));
      std::array<double, 4>& d = dA_rows[static_cast<size_t>(b)];
      for (int64_t j = 0; j + 1 < n; ++j)
        for (int s = 0; s < 2; ++s)
          for (int q = 0; q < 2; ++q) {
            const double xi = std::exp(al[j * 2 + s] + A[s * 2 + q] + unary(th, j + 1, q) +
                                       be[(j + 1) * 2 + q] - lz);
            d[s * 2 + q] += xi * (da[j * 2 + s] + dth(j + 1, q) + db[(j + 1) * 2 + q] - dlz);
          }
    }
  });
  std::array<double, 4> total{};  // in row order: the sum does not depend on the threads
  for (const auto& d : dA_rows)
    for (int k = 0; k < 4; ++k) total[k] += d[k];
  for (int k = 0; k < 4; ++k) dA[k] += static_cast<float>(total[k]);
}

}  // namespace heed::kernels
