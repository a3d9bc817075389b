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
// Truncated at a horizon tau <= T (joint CTC-MoChA, models/joint_ctc_decoder.h), the same sums
// over the first tau frames alone,
//   psi_tau(g c) = sum_{t=1..tau} Phi_{t-1}(g) y_t(c),    p_tau(g) = r_tau^n(g) + r_tau^b(g),
// are the probabilities that the labelling of x_1..x_tau begins with g c, and is g: a path of
// tau frames beginning with g is one or the other, so
//   sum_c psi_tau(g c) + p_tau(g) = psi_tau(g),
// and psi_tau(g c) / psi_tau(g), p_tau(g) / psi_tau(g) are a distribution over what follows g in
// the audio up to tau. None of it reads a frame past tau: a stream computes it as the frames
// come (CtcPrefixChain).
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
    std::vector<float> psi_t;     // [T]: log psi_t of this prefix, t = 1..T (0 for the empty one)
    float psi = 0;                // log psi of this prefix (0 for the empty one)
    int32_t last = -1;            // its last label (-1: empty)
    int64_t length = 0;
  };
  Prefix empty() const;
  // log psi(g c) for every class c into out [V]; out[blank] is -inf, and out[eos] is log p(g|x)
  // when eos >= 0. With a horizon tau in 1..T: log psi_tau(g c), and log p_tau(g) at eos.
  void scores(const Prefix& g, int32_t eos, std::span<float> out, int64_t horizon = -1) const;
  // log psi_tau(g) (0 for the empty prefix)
  static float psi(const Prefix& g, int64_t horizon) {
    return g.length == 0 ? 0.f : g.psi_t[static_cast<size_t>(horizon - 1)];
  }
  // The prefix g c (c a label, not blank or eos)
  Prefix extend(const Prefix& g, int32_t c) const;
  // log p(g | x): every path collapsing to g exactly
  float full(const Prefix& g) const;

 private:
  // r^n and r^b of g c over the first T frames into rn, rb [T], and the running log psi_t into
  // psi_t when not null; returns log psi_T(g c)
  float forward(const Prefix& g, int32_t c, int64_t T, float* rn, float* rb, float* psi_t) const;
  const float* lp_;
  int64_t T_, V_;
  int32_t blank_;
};

// The same scores for one prefix, growing, over frames that come a few at a time (a stream's
// greedy joint CTC-MoChA decoding): each of g's prefixes h_0 (empty) .. h_K = g keeps its r^n,
// r^b and psi_t, and each frame pushed extends them all, O(K) per frame; extend(c) computes
// the new prefix over the frames so far. Prefixes far behind are let go: once h_k's
// r_t^n + r_t^b is below e^-prune of the best h's at a frame, h_k and all before it stop
// being extended (their mass at later frames taken as 0; the scores change by less than
// e^-prune relative, 40 nats: nothing a float shows), so the cost per frame is the few prefixes
// the audio is still on. Memory: the frames' log-probabilities [T, V] and the live prefixes'
// arrays [T]. Up to that pruning, scores(tau) and psi(tau) are CtcPrefixScorer's of the same
// labels over the frames 1..tau.
class CtcPrefixChain {
 public:
  CtcPrefixChain(int64_t V, int32_t blank, float prune = 40.f);
  void push(std::span<const float> log_probs);  // frames [n, V], each a log-softmax
  void extend(int32_t c);                       // g <- g c (c a label)
  // log psi_tau(g c) for every class into out [V] (blank: -inf; eos, when >= 0: log p_tau(g)),
  // tau in 1..frames()
  void scores(int64_t horizon, int32_t eos, std::span<float> out) const;
  float psi(int64_t horizon) const;  // log psi_tau(g), 0 for the empty prefix
  int64_t frames() const { return T_; }
  int64_t length() const { return static_cast<int64_t>(nodes_.size()) - 1; }  // |g|
  int64_t live() const { return length() + 1 - first_live_; }  // prefixes still extended

 private:
  struct Node {  // h_k; k = 0: the empty prefix
    explicit Node(int32_t label = -1) : last(label) {}
    int32_t last;                        // its last label
    std::vector<float> r_n, r_b, psi_t;  // [T], freed once it is let go
  };
  float phi_before(int64_t k, int32_t c, int64_t t) const;  // log Phi_{t-1}(h_k) before c
  void step(Node& h, float p, int64_t t) const;  // frame t of h from p = log Phi_{t-1}(h's g)
  void frame(int64_t t);                         // every live prefix at frame t
  std::vector<float> lp_;                        // [T, V]
  int64_t V_, T_ = 0;
  int32_t blank_;
  float prune_;
  std::vector<Node> nodes_;
  int64_t first_live_ = 0;
};

}  // namespace heed::kernels
