// Monotonic attention's recursions (see the header): the expected alignment and MoChA's
// chunkwise expectation, forward and backward, one row per thread, in double.
#include "heed/kernels/monotonic.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "heed/kernels/parallel.h"

namespace heed::kernels {
namespace {

// Rows per chunk of parallel_for: each row is ~8 S flops.
int64_t row_grain(int64_t S, int64_t w = 1) {
  return grain_for(kSerialWork / 16, 8 * S * w);
}

// One row of one step: q_j = (1 - p_{j-1}) q_{j-1} + alpha_{i-1,j};  alpha_j = p_j q_j
void alignment_row_forward(int64_t S, const float* p, const float* prev, float* q, float* alpha) {
  double carry = 0;  // (1 - p_{j-1}) q_{j-1}
  for (int64_t j = 0; j < S; ++j) {
    const double qj = carry + static_cast<double>(prev[j]);
    q[j] = static_cast<float>(qj);
    alpha[j] = static_cast<float>(static_cast<double>(p[j]) * qj);
    carry = (1.0 - static_cast<double>(p[j])) * qj;
  }
}

// Its backward, in reverse, with gq_{j+1} = dL/dq_{j+1} (0 past the end):
//   dL/dq_j = dalpha_j p_j + gq_{j+1} (1 - p_j)
//   dL/dp_j = dalpha_j q_j - gq_{j+1} q_j
//   dL/dalpha_{i-1,j} = dL/dq_j
void alignment_row_backward(int64_t S, const float* p, const float* q, const float* dalpha,
                            float* dp, float* dprev) {
  double gq_next = 0;
  for (int64_t j = S - 1; j >= 0; --j) {
    const double pj = p[j], qj = q[j], ga = dalpha[j];
    const double gq = ga * pj + gq_next * (1.0 - pj);
    dp[j] += static_cast<float>((ga - gq_next) * qj);
    dprev[j] += static_cast<float>(gq);
    gq_next = gq;
  }
}

}  // namespace

void monotonic_alignment_forward(int64_t B, int64_t S, const float* p, const float* prev, float* q,
                                 float* alpha) {
  parallel_for(B, row_grain(S), [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b)
      alignment_row_forward(S, p + b * S, prev + b * S, q + b * S, alpha + b * S);
  });
}

void monotonic_alignment_backward(int64_t B, int64_t S, const float* p, const float* q,
                                  const float* dalpha, float* dp, float* dprev) {
  parallel_for(B, row_grain(S), [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b)
      alignment_row_backward(S, p + b * S, q + b * S, dalpha + b * S, dp + b * S, dprev + b * S);
  });
}

void monotonic_alignments_forward(int64_t R, int64_t T, int64_t S, const float* p, float* q,
                                  float* alpha) {
  parallel_for(R, row_grain(S * T), [&](int64_t r0, int64_t r1) {
    std::vector<float> start(static_cast<size_t>(S), 0.f);
    if (S > 0) start[0] = 1.f;  // alpha_{-1} = delta_{j,0}
    for (int64_t r = r0; r < r1; ++r)
      for (int64_t i = 0; i < T; ++i) {
        const int64_t o = (r * T + i) * S;
        alignment_row_forward(S, p + o, i == 0 ? start.data() : alpha + o - S, q + o, alpha + o);
      }
  });
}

void monotonic_alignments_backward(int64_t R, int64_t T, int64_t S, const float* p, const float* q,
                                   const float* dalpha, float* dp) {
  parallel_for(R, row_grain(S * T), [&](int64_t r0, int64_t r1) {
    // g: dL/dalpha_i in full, its own gradient plus what step i + 1 passes back through prev
    std::vector<float> g(static_cast<size_t>(S)), back(static_cast<size_t>(S));
    for (int64_t r = r0; r < r1; ++r) {
      std::fill(back.begin(), back.end(), 0.f);
      for (int64_t i = T - 1; i >= 0; --i) {
        const int64_t o = (r * T + i) * S;
        for (int64_t j = 0; j < S; ++j) g[j] = dalpha[o + j] + back[j];
        std::fill(back.begin(), back.end(), 0.f);
        alignment_row_backward(S, p + o, q + o, g.data(), dp + o, back.data());
      }
    }
  });
}

namespace {

// One row's shared terms: e_j = exp(u_j - max u) (0 on padding), the window sums
// D_k = sum_{l=k-w+1}^{k} e_l, r_k = alpha_k / D_k, and R_j = sum_{k=j}^{j+w-1} r_k.
// Windows are summed directly (O(S w)): a running sum's subtractions would leave round-off
// where exp(u) spans many orders of magnitude.
struct ChunkRow {
  std::vector<double> e, D, r, R;

  void compute(int64_t S, int64_t w, const float* alpha, const float* u) {
    e.assign(static_cast<size_t>(S), 0.0);
    D.assign(static_cast<size_t>(S), 0.0);
    r.assign(static_cast<size_t>(S), 0.0);
    R.assign(static_cast<size_t>(S), 0.0);
    float m = -std::numeric_limits<float>::infinity();
    for (int64_t j = 0; j < S; ++j) m = std::max(m, u[j]);
    if (std::isinf(m)) return;  // an empty row: beta = 0
    for (int64_t j = 0; j < S; ++j)
      e[j] = std::exp(static_cast<double>(u[j]) - static_cast<double>(m));
    for (int64_t k = 0; k < S; ++k) {
      double d = 0;
      for (int64_t l = std::max<int64_t>(0, k - w + 1); l <= k; ++l) d += e[l];
      D[k] = d;
      r[k] = d > 0 ? static_cast<double>(alpha[k]) / d : 0.0;
    }
    for (int64_t j = 0; j < S; ++j) {
      double s = 0;
      for (int64_t k = j; k < std::min(S, j + w); ++k) s += r[k];
      R[j] = s;
    }
  }
};

}  // namespace

void mocha_chunk_forward(int64_t B, int64_t S, int64_t w, const float* alpha, const float* u,
                         float* beta) {
  parallel_for(B, row_grain(S, w), [&](int64_t b0, int64_t b1) {
    ChunkRow row;
    for (int64_t b = b0; b < b1; ++b) {
      row.compute(S, w, alpha + b * S, u + b * S);
      // beta_j = e_j sum_{k=j}^{j+w-1} alpha_k / D_k
      for (int64_t j = 0; j < S; ++j) beta[b * S + j] = static_cast<float>(row.e[j] * row.R[j]);
    }
  });
}

void mocha_chunk_backward(int64_t B, int64_t S, int64_t w, const float* alpha, const float* u,
                          const float* dbeta, float* dalpha, float* du) {
  parallel_for(B, row_grain(S, w), [&](int64_t b0, int64_t b1) {
    ChunkRow row;
    std::vector<double> gD;
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t o = b * S;
      row.compute(S, w, alpha + o, u + o);
      gD.assign(static_cast<size_t>(S), 0.0);
      for (int64_t k = 0; k < S; ++k) {
        // gr_k = sum over the j that window k holds of dbeta_j e_j
        double gr = 0;
        for (int64_t j = std::max<int64_t>(0, k - w + 1); j <= k; ++j)
          gr += static_cast<double>(dbeta[o + j]) * row.e[j];
        if (row.D[k] > 0) {
          dalpha[o + k] += static_cast<float>(gr / row.D[k]);  // r_k = alpha_k / D_k
          gD[k] = -gr * row.r[k] / row.D[k];
        }
      }
      for (int64_t l = 0; l < S; ++l) {
        // e_l enters beta_l directly and every D_k whose window holds it (k = l..l+w-1)
        double g = static_cast<double>(dbeta[o + l]) * row.R[l];
        for (int64_t k = l; k < std::min(S, l + w); ++k) g += gD[k];
        du[o + l] += static_cast<float>(g * row.e[l]);  // de/du = e (the shift cancels)
      }
    }
  });
}

}  // namespace heed::kernels
