// CTC prefix scores (see the header: Watanabe et al. 2017, Algorithm 2).
#include "heed/kernels/ctc_prefix.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "heed/util/error.h"

namespace heed::kernels {

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

float log_add(float a, float b) {
  if (a == kNegInf) return b;
  if (b == kNegInf) return a;
  const float m = a > b ? a : b;
  return m + std::log1p(std::exp(-std::fabs(a - b)));
}

// One frame of a prefix h = g c: log r_t^n(h), log r_t^b(h) and log psi_t(h).
struct PrefixFrame {
  float r_n = kNegInf, r_b = kNegInf, psi = kNegInf;  // before the first frame: nothing
};

// log Phi_t(g) before c, from g's log r_t^n and log r_t^b (a repeat needs a blank between).
float phi(float r_n, float r_b, int32_t last, int32_t c) {
  return c == last ? r_b : log_add(r_n, r_b);
}

// log Phi_0 of a prefix of `length` labels: at the first frame only the empty one can emit c.
float first_phi(int64_t length) {
  return length == 0 ? 0.f : kNegInf;
}

// The header's recursion for h = g c at frame t, from h's values at t - 1 (PrefixFrame{} at
// t = 0), p = log Phi_{t-1}(g) (first_phi at t = 0), y = log y_t(c) and b = log y_t(blank).
PrefixFrame next_frame(const PrefixFrame& h, float p, float y, float b) {
  return {
      .r_n = log_add(h.r_n, p) + y, .r_b = log_add(h.r_b, h.r_n) + b, .psi = log_add(h.psi, p + y)};
}

}  // namespace

CtcPrefixScorer::CtcPrefixScorer(const float* log_probs, int64_t T, int64_t V, int32_t blank)
    : lp_(log_probs), T_(T), V_(V), blank_(blank) {
  check(T >= 1 && V >= 2 && blank >= 0 && blank < V, "CTC prefix scores: ", T, " frames of ", V,
        " classes, blank ", blank);
}

CtcPrefixScorer::Prefix CtcPrefixScorer::empty() const {
  Prefix p;
  p.r_n.assign(static_cast<size_t>(T_), kNegInf);
  p.r_b.resize(static_cast<size_t>(T_));
  p.psi_t.assign(static_cast<size_t>(T_), 0.f);
  float acc = 0;  // r_t^b of the empty prefix: every frame so far a blank
  for (int64_t t = 0; t < T_; ++t) {
    acc += lp_[t * V_ + blank_];
    p.r_b[static_cast<size_t>(t)] = acc;
  }
  return p;
}

float CtcPrefixScorer::forward(const Prefix& g, int32_t c, int64_t T, float* rn, float* rb,
                               float* psi_t) const {
  PrefixFrame h;
  for (int64_t t = 0; t < T; ++t) {
    const auto k = static_cast<size_t>(t);
    const float p = t == 0 ? first_phi(g.length) : phi(g.r_n[k - 1], g.r_b[k - 1], g.last, c);
    h = next_frame(h, p, lp_[t * V_ + c], lp_[t * V_ + blank_]);
    rn[t] = h.r_n;
    rb[t] = h.r_b;
    if (psi_t) psi_t[t] = h.psi;
  }
  return h.psi;
}

void CtcPrefixScorer::scores(const Prefix& g, int32_t eos, std::span<float> out,
                             int64_t horizon) const {
  check(static_cast<int64_t>(out.size()) == V_, "CTC prefix scores: ", out.size(), " for ", V_,
        " classes");
  const int64_t T = horizon < 0 ? T_ : horizon;
  check(T >= 1 && T <= T_, "CTC prefix scores: a horizon of ", horizon, " frames of ", T_);
  std::vector<float> rn(static_cast<size_t>(T)), rb(static_cast<size_t>(T));
  for (int32_t c = 0; c < static_cast<int32_t>(V_); ++c) {
    if (c == blank_) {
      out[static_cast<size_t>(c)] = kNegInf;
    } else if (c == eos) {
      const auto k = static_cast<size_t>(T - 1);
      out[static_cast<size_t>(c)] = log_add(g.r_n[k], g.r_b[k]);
    } else {
      out[static_cast<size_t>(c)] = forward(g, c, T, rn.data(), rb.data(), nullptr);
    }
  }
}

CtcPrefixScorer::Prefix CtcPrefixScorer::extend(const Prefix& g, int32_t c) const {
  check(c >= 0 && c < V_ && c != blank_, "CTC prefix scores: class ", c, " is not a label");
  Prefix h;
  h.r_n.resize(static_cast<size_t>(T_));
  h.r_b.resize(static_cast<size_t>(T_));
  h.psi_t.resize(static_cast<size_t>(T_));
  h.psi = forward(g, c, T_, h.r_n.data(), h.r_b.data(), h.psi_t.data());
  h.last = c;
  h.length = g.length + 1;
  return h;
}

float CtcPrefixScorer::full(const Prefix& g) const {
  const auto k = static_cast<size_t>(T_ - 1);
  return log_add(g.r_n[k], g.r_b[k]);
}

CtcPrefixChain::CtcPrefixChain(int64_t V, int32_t blank, float prune)
    : V_(V), blank_(blank), prune_(prune), nodes_(1) {
  check(V >= 2 && blank >= 0 && blank < V && prune > 0, "CTC prefix chain: ", V, " classes, blank ",
        blank, ", pruning at ", prune);
}

float CtcPrefixChain::phi_before(int64_t k, int32_t c, int64_t t) const {
  if (t == 0) return first_phi(k);  // h_k has k labels
  const Node& g = nodes_[static_cast<size_t>(k)];
  const auto s = static_cast<size_t>(t - 1);
  return phi(g.r_n[s], g.r_b[s], g.last, c);
}

void CtcPrefixChain::step(Node& h, float p, int64_t t) const {
  PrefixFrame f;
  if (t > 0) f = {.r_n = h.r_n.back(), .r_b = h.r_b.back(), .psi = h.psi_t.back()};
  f = next_frame(f, p, lp_[static_cast<size_t>(t * V_ + h.last)],
                 lp_[static_cast<size_t>(t * V_ + blank_)]);
  h.r_n.push_back(f.r_n);
  h.r_b.push_back(f.r_b);
  h.psi_t.push_back(f.psi);
}

void CtcPrefixChain::frame(int64_t t) {
  const auto k = static_cast<size_t>(t);
  float best = kNegInf;
  for (int64_t i = first_live_; i <= length(); ++i) {
    Node& h = nodes_[static_cast<size_t>(i)];
    if (i == 0) {  // the empty prefix: every frame a blank
      h.r_n.push_back(kNegInf);
      h.r_b.push_back((t > 0 ? h.r_b.back() : 0.f) + lp_[static_cast<size_t>(t * V_ + blank_)]);
      h.psi_t.push_back(0.f);
    } else {  // from Phi_{t-1} of the prefix before (0 once it is let go)
      const float p = i - 1 >= first_live_ ? phi_before(i - 1, h.last, t) : kNegInf;
      step(h, p, t);
    }
    best = std::max(best, log_add(h.r_n[k], h.r_b[k]));
  }
  // the prefixes far behind let go, from the first, never g itself
  while (first_live_ < length()) {
    Node& h = nodes_[static_cast<size_t>(first_live_)];
    if (!(log_add(h.r_n[k], h.r_b[k]) < best - prune_)) break;
    h = Node(h.last);
    ++first_live_;
  }
}

void CtcPrefixChain::push(std::span<const float> log_probs) {
  check(log_probs.size() % static_cast<size_t>(V_) == 0, "CTC prefix chain: ", log_probs.size(),
        " values are not frames of ", V_);
  lp_.insert(lp_.end(), log_probs.begin(), log_probs.end());
  const int64_t T = static_cast<int64_t>(lp_.size()) / V_;
  for (; T_ < T; ++T_) frame(T_);
}

void CtcPrefixChain::extend(int32_t c) {
  check(c >= 0 && c < V_ && c != blank_, "CTC prefix chain: class ", c, " is not a label");
  // the new prefix over the frames so far, from g (never let go: its arrays are whole)
  Node h(c);
  for (int64_t t = 0; t < T_; ++t) step(h, phi_before(length(), c, t), t);
  nodes_.push_back(std::move(h));
}

void CtcPrefixChain::scores(int64_t horizon, int32_t eos, std::span<float> out) const {
  check(static_cast<int64_t>(out.size()) == V_, "CTC prefix chain: ", out.size(), " for ", V_,
        " classes");
  check(horizon >= 1 && horizon <= T_, "CTC prefix chain: a horizon of ", horizon, " frames of ",
        T_);
  const Node& g = nodes_.back();
  for (int32_t c = 0; c < static_cast<int32_t>(V_); ++c) {
    float score = kNegInf;
    if (c == blank_) {
      // no label
    } else if (c == eos) {
      const auto k = static_cast<size_t>(horizon - 1);
      score = log_add(g.r_n[k], g.r_b[k]);
    } else {
      for (int64_t t = 0; t < horizon; ++t)
        score = log_add(score, phi_before(length(), c, t) + lp_[static_cast<size_t>(t * V_ + c)]);
    }
    out[static_cast<size_t>(c)] = score;
  }
}

float CtcPrefixChain::psi(int64_t horizon) const {
  check(horizon >= 1 && horizon <= T_, "CTC prefix chain: a horizon of ", horizon, " frames of ",
        T_);
  return length() == 0 ? 0.f : nodes_.back().psi_t[static_cast<size_t>(horizon - 1)];
}

}  // namespace heed::kernels
