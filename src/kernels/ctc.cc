// CTC forward–backward (see the header). Graves et al. 2006 define alpha_t(s) and beta_t(s)
// both including y_t(l'_s); so does this code, in log space, which is why the occupancy
// alpha_t(s) beta_t(s) is divided by y_t(l'_s) once.
// Leaves out: pruning the states that cannot reach the end (the lattice is small for the
// sequence lengths heed trains on).
#include "heed/kernels/ctc.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "heed/kernels/parallel.h"
#include "heed/kernels/softmax.h"
#include "heed/tensor/shape.h"

namespace heed::kernels {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity(), kNegInf = -kInf;

// log(e^a + e^b), exact for -inf operands
inline float log_add(float a, float b) {
  if (a < b) std::swap(a, b);
  if (b == kNegInf) return a;
  return a + std::log1p(std::exp(b - a));
}

// Sequence b's view of the batch: its lengths, labels and slices.
struct Sequence {
  int64_t T, L, S;  // frames, labels, extended states 2L + 1
  const int32_t* labels;
  int32_t blank;
  int32_t label(int64_t s) const { return s % 2 == 0 ? blank : labels[s / 2]; }
  // the transition s - 2 -> s skips a blank: allowed between two different labels
  bool can_skip(int64_t s) const { return s >= 2 && s % 2 == 1 && label(s) != label(s - 2); }
};

Sequence sequence(const CtcBatch& p, int64_t b) {
  const int64_t L = p.target_lengths[b];
  return {p.input_lengths[b], L, 2 * L + 1, p.targets + b * p.L, p.blank};
}

// beta [T, W] of sequence q (log-probabilities lp [T, C]): the backward variables.
void backward_variables(const Sequence& q, const float* lp, int64_t W, int64_t C, float* bt) {
  // eq. 10: beta_T(S) = y_T(blank), beta_T(S - 1) = y_T(l_L), 0 otherwise
  float* end = bt + (q.T - 1) * W;
  std::fill(end, end + W, kNegInf);
  end[q.S - 1] = lp[(q.T - 1) * C + q.blank];
  if (q.S > 1) end[q.S - 2] = lp[(q.T - 1) * C + q.label(q.S - 2)];
  // eq. 11: beta_t(s) = (beta_{t+1}(s) + beta_{t+1}(s+1) [+ beta_{t+1}(s+2)]) y_t(l'_s)
  for (int64_t t = q.T - 2; t >= 0; --t) {
    const float* next = bt + (t + 1) * W;
    float* cur = bt + t * W;
    for (int64_t s = 0; s < q.S; ++s) {
      float sum = next[s];
      if (s + 1 < q.S) sum = log_add(sum, next[s + 1]);
      if (s + 2 < q.S && q.can_skip(s + 2)) sum = log_add(sum, next[s + 2]);
      cur[s] = sum + lp[t * C + q.label(s)];
    }
  }
}

}  // namespace

void ctc_forward(const CtcBatch& p, const float* logits, float* log_probs, float* alpha,
                 float* nll) {
  // y_t = softmax(u_t), kept as log y_t
  softmax_forward(logits, {}, log_probs, Shape{p.B * p.T, p.C}, /*log=*/true);
  ctc_alpha(p, log_probs, alpha, nll);
}

void ctc_alpha(const CtcBatch& p, const float* log_probs, float* alpha, float* nll) {
  const int64_t C = p.C, W = ctc_states(p);
  parallel_for(p.B, 1, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      const Sequence q = sequence(p, b);
      const float* lp = log_probs + b * p.T * C;  // [T, C]
      float* a = alpha + b * p.T * W;             // [T, W]
      if (q.T == 0) {  // no frames: only the empty labelling has a path (the empty one)
        nll[b] = q.L == 0 ? 0.f : kInf;
        continue;
      }
      // eq. 6: alpha_1(1) = y_1(blank), alpha_1(2) = y_1(l_1), alpha_1(s) = 0 otherwise
      std::fill(a, a + W, kNegInf);
      a[0] = lp[q.blank];
      if (q.S > 1) a[1] = lp[q.label(1)];
      // eq. 7: alpha_t(s) = (alpha_{t-1}(s) + alpha_{t-1}(s-1) [+ alpha_{t-1}(s-2)]) y_t(l'_s)
      for (int64_t t = 1; t < q.T; ++t) {
        const float* prev = a + (t - 1) * W;
        float* cur = a + t * W;
        std::fill(cur + q.S, cur + W, kNegInf);
        for (int64_t s = 0; s < q.S; ++s) {
          float sum = prev[s];
          if (s >= 1) sum = log_add(sum, prev[s - 1]);
          if (q.can_skip(s)) sum = log_add(sum, prev[s - 2]);
          cur[s] = sum + lp[t * C + q.label(s)];
        }
      }
      // eq. 8: p(l | x) = alpha_T(S) + alpha_T(S - 1)
      const float* last = a + (q.T - 1) * W;
      const float log_p = q.S > 1 ? log_add(last[q.S - 1], last[q.S - 2]) : last[0];
      nll[b] = -log_p;  // +inf when no path
    }
  });
}

void ctc_backward(const CtcBatch& p, const float* log_probs, const float* alpha, const float* nll,
                  const float* scale, float* beta, float* dlogits) {
  const int64_t C = p.C, W = ctc_states(p);
  parallel_for(p.B, 1, [&](int64_t b0, int64_t b1) {
    std::vector<float> occupancy(static_cast<size_t>(C));  // log sum alpha beta per class
    for (int64_t b = b0; b < b1; ++b) {
      const Sequence q = sequence(p, b);
      if (q.T == 0 || std::isinf(nll[b])) continue;  // no path: no gradient
      const float* lp = log_probs + b * p.T * C;     // [T, C]
      const float* a = alpha + b * p.T * W;          // [T, W]
      float* bt = beta + b * p.T * W;                // [T, W]
      float* g = dlogits + b * p.T * C;              // [T, C]
      backward_variables(q, lp, W, C, bt);
      // eq. 16 with 1/p = e^{nll}: y_t(c) - e^{log sum_{l'_s = c} alpha beta - log y_t(c) + nll}
      const float log_inv_p = nll[b];
      for (int64_t t = 0; t < q.T; ++t) {
        std::fill(occupancy.begin(), occupancy.end(), kNegInf);
        for (int64_t s = 0; s < q.S; ++s)
          occupancy[q.label(s)] = log_add(occupancy[q.label(s)], a[t * W + s] + bt[t * W + s]);
        for (int64_t c = 0; c < C; ++c) {
          const float y = lp[t * C + c];
          const float used = occupancy[c] == kNegInf ? 0.f : std::exp(occupancy[c] - y + log_inv_p);
          g[t * C + c] += scale[b] * (std::exp(y) - used);
        }
      }
    }
  });
}

void ctc_state_posteriors(const CtcBatch& p, const float* log_probs, const float* alpha,
                          const float* nll, float* beta, float* gamma) {
  const int64_t C = p.C, W = ctc_states(p);
  parallel_for(p.B, 1, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      const Sequence q = sequence(p, b);
      float* gm = gamma + b * p.T * W;  // [T, W]
      std::fill(gm, gm + p.T * W, 0.f);
      if (q.T == 0 || std::isinf(nll[b])) continue;
      const float* lp = log_probs + b * p.T * C;
      const float* a = alpha + b * p.T * W;
      float* bt = beta + b * p.T * W;
      backward_variables(q, lp, W, C, bt);
      // gamma_t(s) = alpha_t(s) beta_t(s) / (y_t(l'_s) p(l | x))  (eq. 14)
      for (int64_t t = 0; t < q.T; ++t)
        for (int64_t s = 0; s < q.S; ++s) {
          const float v = a[t * W + s] + bt[t * W + s];
          if (v != kNegInf) gm[t * W + s] = std::exp(v - lp[t * C + q.label(s)] + nll[b]);
        }
    }
  });
}

}  // namespace heed::kernels
