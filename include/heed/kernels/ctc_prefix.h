// CTC prefix scores (Watanabe, Hori, Kim, Hershey & Hayashi 2017, "Hybrid CTC/Attention
// Architecture for End-to-End Speech Recognition", section 3.3, Algorithm 2): the probability
// that a label sequence *begins* with the prefix h, summed over every frame-level path whose
// collapse starts with h,
//   psi(h) = sum_{t=1..T} Phi_{t-1}(g) y_t(c),    h = g c,
// with each prefix's forward variables r_t^n(h) (paths of x_1..x_t collapsing to h, ending in
// a label) and r_t^b(h) (ending in a blank):
//   r_t^n(h) = (r_{t-1}^n(h) + Phi_{t-1}(g)) y_t(c)
//   r_t^b(h) = (r_{t-1}^b(h) + r_{t-1}^n(h)) y_t(blank)
//   Phi_t(g) = r_t^b(g) + (c == last(g) ? 0 : r_t^n(g))   (a repeat needs a blank between)
// the empty prefix having r_t^n = 0, r_t^b = prod_{s<=t} y_s(blank); and the whole sequence's
// probability p(g | x) = r_T^n(g) + r_T^b(g) (what <eos> scores). All in log space. The
// attention decoder's beam search adds lambda (log psi(g c) - log psi(g)) to each candidate's
// score (ESPnet's joint decoding).
// Leaves out: the beam search and the model (models/joint_ctc_decoder.h).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace heed::kernels {

class CtcPrefixScorer {
 public:
  // log_probs [T, V] of one utterance's frames (a row of the model's CTC head), blank's class
  CtcPrefixScorer(const float* log_probs, int64_t T, int64_t V, int32_t blank);
  struct Prefix {
    std::vector<float> r_n, r_b;  // [T]: log r_t^n, log r_t^b
    float psi = 0;                // log psi of this prefix (0 for the empty one)
    int32_t last = -1;            // its last label (-1: empty)
    int64_t length = 0;
  };
  Prefix empty() const;
  // log psi(g c) for every class c into out [V]; out[blank] is -inf, and out[eos] is log p(g|x)
  // when eos >= 0.
  void scores(const Prefix& g, int32_t eos, std::span<float> out) const;
  // The prefix g c (c a label, not blank or eos)
  Prefix extend(const Prefix& g, int32_t c) const;
  // log p(g | x): every path collapsing to g exactly
  float full(const Prefix& g) const;

 private:
  // r^n and r^b of g c into rn, rb [T]; returns log psi(g c)
  float forward(const Prefix& g, int32_t c, float* rn, float* rb) const;
  const float* lp_;
  int64_t T_, V_;
  int32_t blank_;
};

}  // namespace heed::kernels
