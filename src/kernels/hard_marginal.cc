// Exact marginalisation over a hard attention's choice (see the header), forward and backward,
// one row per thread.
#include "heed/kernels/hard_marginal.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "heed/kernels/parallel.h"

namespace heed::kernels {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// Rows per chunk of parallel_for: a row is ~4 S V flops and S V exps.
int64_t row_grain(int64_t S, int64_t V) {
  return grain_for(kSerialWork, 16 * S * V);
}

// One row's per-position log-normalisers: lse_j = logsumexp_v (base_v + keys_jv) [S].
void log_normalisers(int64_t S, int64_t V, const float* base, const float* keys,
                     const float* log_alpha, double* lse) {
  for (int64_t j = 0; j < S; ++j) {
    if (log_alpha[j] == -std::numeric_limits<float>::infinity()) {
      lse[j] = 0;  // unused: this position has no mass
      continue;
    }
    const float* k = keys + j * V;
    double m = kNegInf;
    for (int64_t v = 0; v < V; ++v) m = std::max(m, static_cast<double>(base[v] + k[v]));
    double s = 0;
    for (int64_t v = 0; v < V; ++v) s += std::exp(static_cast<double>(base[v] + k[v]) - m);
    // cppcheck-suppress invalidFunctionArg ; s >= 1: the maximum contributes exp(0) = 1
    lse[j] = m + std::log(s);
  }
}

}  // namespace

void hard_marginal_forward(int64_t B, int64_t S, int64_t V, const float* base, const float* keys,
                           const float* log_alpha, float* out) {
  parallel_for(B, row_grain(S, V), [&](int64_t b0, int64_t b1) {
    std::vector<double> lse(S), m(V), acc(V);
    for (int64_t b = b0; b < b1; ++b) {
      const float* bb = base + b * V;
      const float* kb = keys + b * S * V;
      const float* la = log_alpha + b * S;
      log_normalisers(S, V, bb, kb, la, lse.data());
      // out_v = logsumexp_j (log alpha_j + base_v + keys_jv - lse_j), by a running maximum
      std::fill(m.begin(), m.end(), kNegInf);
      std::fill(acc.begin(), acc.end(), 0.0);
      for (int64_t j = 0; j < S; ++j) {
        if (la[j] == -std::numeric_limits<float>::infinity()) continue;
        const double c = static_cast<double>(la[j]) - lse[j];
        const float* k = kb + j * V;
        for (int64_t v = 0; v < V; ++v) {
          const double x = c + static_cast<double>(bb[v] + k[v]);
          if (x > m[v]) {
            acc[v] = acc[v] * std::exp(m[v] - x) + 1.0;
            m[v] = x;
          } else {
            acc[v] += std::exp(x - m[v]);
          }
        }
      }
      for (int64_t v = 0; v < V; ++v)
        out[b * V + v] = static_cast<float>(acc[v] > 0 ? m[v] + std::log(acc[v]) : kNegInf);
    }
  });
}

void hard_marginal_backward(int64_t B, int64_t S, int64_t V, const float* base, const float* keys,
                            const float* log_alpha, const float* out, const float* dout,
                            float* dbase, float* dkeys, float* dlog_alpha) {
  parallel_for(B, row_grain(S, V), [&](int64_t b0, int64_t b1) {
    std::vector<double> lse(S), r(V);
    for (int64_t b = b0; b < b1; ++b) {
      const float* bb = base + b * V;
      const float* kb = keys + b * S * V;
      const float* la = log_alpha + b * S;
      const float* ob = out + b * V;
      const float* gb = dout + b * V;
      log_normalisers(S, V, bb, kb, la, lse.data());
      for (int64_t j = 0; j < S; ++j) {
        if (la[j] == -std::numeric_limits<float>::infinity()) continue;
        const double c = static_cast<double>(la[j]) - lse[j];
        const float* k = kb + j * V;
        // g_v r_jv, with r_jv = exp(log alpha_j + log p(v | j) - log p(v)), and their sum
        double gr_sum = 0;
        for (int64_t v = 0; v < V; ++v) {
          r[v] = gb[v] == 0.f ? 0.0
                              : static_cast<double>(gb[v]) *
                                    std::exp(c + static_cast<double>(bb[v] + k[v]) - ob[v]);
          gr_sum += r[v];
        }
        dlog_alpha[b * S + j] += static_cast<float>(gr_sum);
        // dlogits_jv = g_v r_jv - p(v | j) sum_u g_u r_ju
        float* dk = dkeys + (b * S + j) * V;
        float* db = dbase + b * V;
        for (int64_t v = 0; v < V; ++v) {
          const double p = std::exp(static_cast<double>(bb[v] + k[v]) - lse[j]);
          const auto d = static_cast<float>(r[v] - p * gr_sum);
          dk[v] += d;
          db[v] += d;
        }
      }
    }
  });
}

}  // namespace heed::kernels
