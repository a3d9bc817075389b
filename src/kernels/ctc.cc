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
#include "heed/kernels/vmath.h"
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

// alpha's representation of a sequence (ctc_forward's `space`)
constexpr int32_t kScaled = 0, kLogSpace = 1;
// A frame whose (normalised) forward or backward sum falls below this has underflowed float:
// the sequence is redone in log space.
constexpr float kTiny = 1e-30f;
// The frame's sum is not the only thing that can underflow. A state whose share of its frame
// falls below float's range (about e^-87 of the frame's mass: a path that needs labels a peaky,
// blank-saturated model gives e^-30 each) becomes 0 and stays 0, and the paths through it are
// lost; when they are the only ones that reach the end, the loss comes out tens of nats too
// high and the gradient y - gamma, normalised by what is left, is wrong by as many orders of
// magnitude (found as gradient norms of 1e20 when a recognizer trained on SentencePiece
// pieces). So each recursion also checks that no state with a positive inflow came out 0, and
// the sequence goes to log space when one did.

// Per thread: a frame's y_t(l'_s), a row of products (the backward's y b; the forward's
// inflows), the skip transitions (1 where s - 2 -> s is allowed), and the frames' occupancy sums.
struct Scratch {
  std::vector<float> y, w, skip;
  std::vector<double> z;
  explicit Scratch(int64_t n)
      : y(static_cast<size_t>(n + 2)),
        w(static_cast<size_t>(n + 2)),
        skip(static_cast<size_t>(n + 2)) {}
  void prepare(const Sequence& q) {
    for (int64_t s = 0; s < q.S; ++s) skip[static_cast<size_t>(s)] = q.can_skip(s) ? 1.f : 0.f;
    skip[static_cast<size_t>(q.S)] = skip[static_cast<size_t>(q.S) + 1] = 0.f;
  }
  // y[s] = y_t(l'_s) = exp(log y_t(l'_s)) of the frame lp_t [C]
  void gather(const Sequence& q, const float* lp_t) {
    const float blank = vmath::exp(lp_t[q.blank]);
    for (int64_t k = 0; k < q.L; ++k) {
      y[static_cast<size_t>(2 * k)] = blank;
      y[static_cast<size_t>(2 * k + 1)] = vmath::exp(lp_t[q.labels[k]]);
    }
    y[static_cast<size_t>(q.S - 1)] = blank;
  }
};

// The states of frame t that lie on some complete path: reachable from the start (s <= 2t + 1)
// and able to reach the end (s >= S - 2 (T - t)).
inline std::pair<int64_t, int64_t> window(const Sequence& q, int64_t t) {
  return {std::max<int64_t>(0, q.S - 2 * (q.T - t)), std::min<int64_t>(q.S, 2 * t + 2)};
}

// Enough frames for the labels and a blank between equal neighbours.
inline bool feasible(const Sequence& q) {
  int64_t needed = q.L;
  for (int64_t k = 1; k < q.L; ++k) needed += q.labels[k] == q.labels[k - 1] ? 1 : 0;
  return q.T >= needed;
}

// Forward variables a [T, W] in log space (eq. 5-7); returns nll = -log p(l | x), +inf when no
// path exists.
float forward_log(const Sequence& q, const float* lp, int64_t W, int64_t C, float* a) {
  if (q.T == 0) return q.L == 0 ? 0.f : kInf;  // no frames: only the empty labelling
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
  return -log_p;  // +inf when no path
}

// The same recursion on probabilities, each frame normalised to sum 1 (Graves et al. 2006,
// eq. 9: alpha^_t = alpha_t / C_t, log p = sum_t log C_t): multiply-adds over the window of
// live states instead of a log-add per state. False when a frame's sum or a live state underflows.
bool forward_scaled(const Sequence& q, const float* lp, int64_t W, int64_t C, float* a, Scratch& sc,
                    float& nll) {
  if (q.T == 0 || !feasible(q)) {
    nll = q.T == 0 && q.L == 0 ? 0.f : kInf;
    return true;
  }
  sc.prepare(q);
  const float* skip = sc.skip.data();
  float* __restrict in = sc.w.data();  // a state's inflow, before y_t(l'_s)
  double log_p = 0;
  for (int64_t t = 0; t < q.T; ++t) {
    sc.gather(q, lp + t * C);
    const float* y = sc.y.data();
    float* __restrict cur = a + t * W;
    const std::pair<int64_t, int64_t> live = window(q, t);
    const int64_t lo = live.first, hi = live.second;  // (no structured binding: OpenMP regions)
    std::fill(cur, cur + lo, 0.f);
    std::fill(cur + hi, cur + W, 0.f);
    if (t == 0) {  // eq. 6
      for (int64_t s = lo; s < hi; ++s) in[s] = 1.f;
    } else {  // eq. 7, from the previous (normalised) row
      const float* __restrict prev = a + (t - 1) * W;
      int64_t s = lo;
      for (; s < hi && s < 2; ++s) in[s] = prev[s] + (s >= 1 ? prev[s - 1] : 0.f);
#pragma omp simd
      for (int64_t k = s; k < hi; ++k) in[k] = prev[k] + prev[k - 1] + skip[k] * prev[k - 2];
    }
#pragma omp simd
    for (int64_t s = lo; s < hi; ++s) cur[s] = in[s] * y[s];
    float sum = 0.f;
#pragma omp simd reduction(+ : sum)
    for (int64_t s = lo; s < hi; ++s) sum += cur[s];
    if (!(sum >= kTiny)) return false;
    const float inv = 1.f / sum;
    float lost = 0.f;  // 1 when a state with a positive inflow came out 0
#pragma omp simd reduction(max : lost)
    for (int64_t s = lo; s < hi; ++s) {
      cur[s] *= inv;
      lost = std::max(lost, in[s] > 0.f && cur[s] == 0.f ? 1.f : 0.f);
    }
    if (lost > 0.f) return false;
    log_p += std::log(double{sum});
  }
  // eq. 8, on the last normalised row
  const float* last = a + (q.T - 1) * W;
  const float end = q.S > 1 ? last[q.S - 1] + last[q.S - 2] : last[0];
  if (!(end > 0.f)) return false;
  nll = static_cast<float>(-(log_p + std::log(double{end})));
  return true;
}

// The gradient of a sequence whose forward variables a are in log space (eq. 16).
void backward_log(const Sequence& q, const float* lp, const float* a, int64_t W, int64_t C,
                  float log_inv_p, float scale, float* bt, float* g) {
  backward_variables(q, lp, W, C, bt);
  std::vector<float> occupancy(static_cast<size_t>(C));  // log sum alpha beta per class
  // eq. 16 with 1/p = e^{nll}: y_t(c) - e^{log sum_{l'_s = c} alpha beta - log y_t(c) + nll}
  for (int64_t t = 0; t < q.T; ++t) {
    std::fill(occupancy.begin(), occupancy.end(), kNegInf);
    for (int64_t s = 0; s < q.S; ++s)
      occupancy[q.label(s)] = log_add(occupancy[q.label(s)], a[t * W + s] + bt[t * W + s]);
    for (int64_t c = 0; c < C; ++c) {
      const float y = lp[t * C + c];
      const float used = occupancy[c] == kNegInf ? 0.f : std::exp(occupancy[c] - y + log_inv_p);
      g[t * C + c] += scale * (std::exp(y) - used);
    }
  }
}

// The gradient from normalised forward variables a: backward variables that leave y_t out,
//   b_t(s) = sum_{s' in {s, s+1, s+2 if skip}} y_{t+1}(l'_s') b_{t+1}(s'),  b_T = 1 at the ends,
// normalised per frame, so that alpha_t(s) b_t(s) is the occupancy of (t, s) up to a factor of
// the frame, which normalising over the frame's states removes (the occupancies of a frame sum
// to 1). False when a frame's sum or a live state underflows.
bool backward_scaled(const Sequence& q, const float* lp, const float* a, int64_t W, int64_t C,
                     float scale, float* bt, float* g, Scratch& sc) {
  sc.prepare(q);
  const float* skip = sc.skip.data();
  float* w = sc.w.data();
  float* end = bt + (q.T - 1) * W;
  std::fill(end, end + W, 0.f);
  end[q.S - 1] = 1.f;
  if (q.S > 1) end[q.S - 2] = 1.f;
  for (int64_t t = q.T - 2; t >= 0; --t) {
    sc.gather(q, lp + (t + 1) * C);
    const float* y = sc.y.data();
    const float* next = bt + (t + 1) * W;
    float* __restrict cur = bt + t * W;
    float lost = 0.f;  // 1 when a state with a positive inflow came out 0
#pragma omp simd reduction(max : lost)
    for (int64_t s = 0; s < q.S; ++s) {
      w[s] = y[s] * next[s];
      lost = std::max(lost, next[s] > 0.f && w[s] == 0.f ? 1.f : 0.f);
    }
    if (lost > 0.f) return false;
    w[q.S] = w[q.S + 1] = 0.f;
    const std::pair<int64_t, int64_t> live = window(q, t);
    const int64_t lo = live.first, hi = live.second;  // (no structured binding: OpenMP regions)
    std::fill(cur, cur + lo, 0.f);
    std::fill(cur + hi, cur + W, 0.f);
    float sum = 0.f;
#pragma omp simd reduction(+ : sum)
    for (int64_t s = lo; s < hi; ++s) {
      cur[s] = w[s] + w[s + 1] + skip[s + 2] * w[s + 2];
      sum += cur[s];
    }
    if (!(sum >= kTiny)) return false;
    const float inv = 1.f / sum;
#pragma omp simd reduction(max : lost)
    for (int64_t s = lo; s < hi; ++s) {
      const float v = cur[s] * inv;
      lost = std::max(lost, cur[s] > 0.f && v == 0.f ? 1.f : 0.f);
      cur[s] = v;
    }
    if (lost > 0.f) return false;
  }
  // eq. 16: y_t(c) - sum_{l'_s = c} gamma_t(s), gamma_t = alpha_t b_t / sum_s alpha_t b_t. The
  // products are taken in double: alpha and b, each normalised on its own, can put their mass
  // on different states of a long sequence, and a float product would underflow. Every frame's
  // sum first, so that a failure leaves the gradient untouched.
  std::vector<double>& z = sc.z;
  z.resize(static_cast<size_t>(q.T));
  for (int64_t t = 0; t < q.T; ++t) {
    const float* at = a + t * W;
    const float* b = bt + t * W;
    double sum = 0;
#pragma omp simd reduction(+ : sum)
    for (int64_t s = 0; s < q.S; ++s) sum += double{at[s]} * double{b[s]};
    if (!(sum > 0)) return false;
    z[static_cast<size_t>(t)] = sum;
  }
  for (int64_t t = 0; t < q.T; ++t) {
    const float* at = a + t * W;
    const float* b = bt + t * W;
    float* gt = g + t * C;
    const float* lpt = lp + t * C;
#pragma omp simd
    for (int64_t c = 0; c < C; ++c) gt[c] += scale * vmath::exp(lpt[c]);
    const double k = scale / z[static_cast<size_t>(t)];
    for (int64_t s = 0; s < q.S; ++s)
      gt[q.label(s)] -= static_cast<float>(k * double{at[s]} * double{b[s]});
  }
  return true;
}

}  // namespace

void ctc_alpha(const CtcBatch& p, const float* log_probs, float* alpha, float* nll) {
  const int64_t C = p.C, W = ctc_states(p);
  parallel_for(p.B, 1, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b)
      nll[b] = forward_log(sequence(p, b), log_probs + b * p.T * C, W, C, alpha + b * p.T * W);
  });
}

void ctc_forward(const CtcBatch& p, const float* logits, float* log_probs, float* alpha,
                 int32_t* space, float* nll) {
  // y_t = softmax(u_t), kept as log y_t
  softmax_forward(logits, {}, log_probs, Shape{p.B * p.T, p.C}, /*log=*/true);
  const int64_t C = p.C, W = ctc_states(p);
  parallel_for(p.B, 1, [&](int64_t b0, int64_t b1) {
    Scratch sc(W);
    for (int64_t b = b0; b < b1; ++b) {
      const Sequence q = sequence(p, b);
      const float* lp = log_probs + b * p.T * C;
      float* a = alpha + b * p.T * W;
      space[b] = kScaled;
      if (!forward_scaled(q, lp, W, C, a, sc, nll[b])) {
        space[b] = kLogSpace;  // a frame's sum underflowed float: exactly, in log space
        nll[b] = forward_log(q, lp, W, C, a);
      }
    }
  });
}

void ctc_backward(const CtcBatch& p, const float* log_probs, const float* alpha,
                  const int32_t* space, const float* nll, const float* scale, float* beta,
                  float* dlogits) {
  const int64_t C = p.C, W = ctc_states(p);
  parallel_for(p.B, 1, [&](int64_t b0, int64_t b1) {
    Scratch sc(std::max(W, C));
    std::vector<float> log_alpha;  // a fallback's forward variables, in log space
    for (int64_t b = b0; b < b1; ++b) {
      const Sequence q = sequence(p, b);
      if (q.T == 0 || std::isinf(nll[b])) continue;  // no path: no gradient
      const float* lp = log_probs + b * p.T * C;     // [T, C]
      const float* a = alpha + b * p.T * W;          // [T, W]
      float* bt = beta + b * p.T * W;                // [T, W]
      float* g = dlogits + b * p.T * C;              // [T, C]
      if (space[b] == kScaled && backward_scaled(q, lp, a, W, C, scale[b], bt, g, sc)) continue;
      if (space[b] == kScaled) {  // the backward recursion underflowed: all of it in log space
        log_alpha.resize(static_cast<size_t>(p.T * W));
        forward_log(q, lp, W, C, log_alpha.data());
        a = log_alpha.data();
      }
      backward_log(q, lp, a, W, C, nll[b], scale[b], bt, g);
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
