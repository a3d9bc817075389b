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
  // Phi_t(g): paths of g that can be followed by c at t + 1
  auto phi = [&](int64_t t) {
    const auto k = static_cast<size_t>(t);
    return c == g.last ? g.r_b[k] : log_add(g.r_n[k], g.r_b[k]);
  };
  // t = 1: only the empty prefix can emit c at the first frame
  rn[0] = g.length == 0 ? lp_[c] : kNegInf;
  rb[0] = kNegInf;
  float psi = rn[0];
  if (psi_t) psi_t[0] = psi;
  for (int64_t t = 1; t < T; ++t) {
    const float y = lp_[t * V_ + c], p = phi(t - 1);
    rn[t] = log_add(rn[t - 1], p) + y;
    rb[t] = log_add(rb[t - 1], rn[t - 1]) + lp_[t * V_ + blank_];
    psi = log_add(psi, p + y);
    if (psi_t) psi_t[t] = psi;
  }
  return psi;
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

float CtcPrefixChain::phi(const Node& g, int32_t c, int64_t t) const {
  const auto k = static_cast<size_t>(t);
  return c == g.last ? g.r_b[k] : log_add(g.r_n[k], g.r_b[k]);
}

// One step of the recursion (the header's) for h = g c at frame t, from Phi_{t-1}(g) = p.
void CtcPrefixChain::step(std::vector<float>& r_n, std::vector<float>& r_b,
                          std::vector<float>& psi_t, int32_t c, float p, int64_t t) const {
  const float y = lp_[static_cast<size_t>(t * V_ + c)];
  const float rn = t > 0 ? r_n.back() : kNegInf, rb = t > 0 ? r_b.back() : kNegInf;
  const float psi = t > 0 ? psi_t.back() : kNegInf;
  r_n.push_back(log_add(rn, p) + y);
  r_b.push_back(log_add(rb, rn) + lp_[static_cast<size_t>(t * V_ + blank_)]);
  psi_t.push_back(log_add(psi, p + y));
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
    } else {
      // Phi_{t-1} of the prefix before (0 once it is let go); at t = 1 only the empty one emits
      float p = kNegInf;
      if (t == 0)
        p = i == 1 ? 0.f : kNegInf;
      else if (i - 1 >= first_live_)
        p = phi(nodes_[static_cast<size_t>(i - 1)], h.last, t - 1);
      step(h.r_n, h.r_b, h.psi_t, h.last, p, t);
    }
    best = std::max(best, log_add(h.r_n[k], h.r_b[k]));
  }
  // the prefixes far behind let go, from the first, never g itself
  while (first_live_ < length()) {
    Node& h = nodes_[static_cast<size_t>(first_live_)];
    if (!(log_add(h.r_n[k], h.r_b[k]) < best - prune_)) break;
    h = Node{.last = h.last};
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
  const Node& g = nodes_.back();
  Node h{.last = c};
  for (int64_t t = 0; t < T_; ++t) {
    const float p = t == 0 ? (length() == 0 ? 0.f : kNegInf) : phi(g, c, t - 1);
    step(h.r_n, h.r_b, h.psi_t, c, p, t);
  }
  nodes_.push_back(std::move(h));
}

void CtcPrefixChain::scores(int64_t horizon, int32_t eos, std::span<float> out) const {
  check(static_cast<int64_t>(out.size()) == V_, "CTC prefix chain: ", out.size(), " for ", V_,
        " classes");
  check(horizon >= 1 && horizon <= T_, "CTC prefix chain: a horizon of ", horizon, " frames of ",
        T_);
  const Node& g = nodes_.back();
  for (int32_t c = 0; c < static_cast<int32_t>(V_); ++c) {
    float psi = kNegInf;
    if (c == blank_) {
      // no label
    } else if (c == eos) {
      const auto k = static_cast<size_t>(horizon - 1);
      psi = log_add(g.r_n[k], g.r_b[k]);
    } else {
      psi = length() == 0 ? lp_[static_cast<size_t>(c)] : kNegInf;  // t = 1
      for (int64_t t = 1; t < horizon; ++t) psi = log_add(psi, phi(g, c, t - 1) + lp_[t * V_ + c]);
    }
    out[static_cast<size_t>(c)] = psi;
  }
}

float CtcPrefixChain::psi(int64_t horizon) const {
  check(horizon >= 1 && horizon <= T_, "CTC prefix chain: a horizon of ", horizon, " frames of ",
        T_);
  return length() == 0 ? 0.f : nodes_.back().psi_t[static_cast<size_t>(horizon - 1)];
}

}  // namespace heed::kernels
