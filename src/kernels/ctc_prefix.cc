// CTC prefix scores (see the header: Watanabe et al. 2017, Algorithm 2).
#include "heed/kernels/ctc_prefix.h"

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
  float acc = 0;  // r_t^b of the empty prefix: every frame so far a blank
  for (int64_t t = 0; t < T_; ++t) {
    acc += lp_[t * V_ + blank_];
    p.r_b[static_cast<size_t>(t)] = acc;
  }
  return p;
}

float CtcPrefixScorer::forward(const Prefix& g, int32_t c, float* rn, float* rb) const {
  // Phi_t(g): paths of g that can be followed by c at t + 1
  auto phi = [&](int64_t t) {
    const auto k = static_cast<size_t>(t);
    return c == g.last ? g.r_b[k] : log_add(g.r_n[k], g.r_b[k]);
  };
  // t = 1: only the empty prefix can emit c at the first frame
  rn[0] = g.length == 0 ? lp_[c] : kNegInf;
  rb[0] = kNegInf;
  float psi = rn[0];
  for (int64_t t = 1; t < T_; ++t) {
    const float y = lp_[t * V_ + c], p = phi(t - 1);
    rn[t] = log_add(rn[t - 1], p) + y;
    rb[t] = log_add(rb[t - 1], rn[t - 1]) + lp_[t * V_ + blank_];
    psi = log_add(psi, p + y);
  }
  return psi;
}

void CtcPrefixScorer::scores(const Prefix& g, int32_t eos, std::span<float> out) const {
  check(static_cast<int64_t>(out.size()) == V_, "CTC prefix scores: ", out.size(), " for ", V_,
        " classes");
  std::vector<float> rn(static_cast<size_t>(T_)), rb(static_cast<size_t>(T_));
  for (int32_t c = 0; c < static_cast<int32_t>(V_); ++c) {
    if (c == blank_) {
      out[static_cast<size_t>(c)] = kNegInf;
    } else if (c == eos) {
      out[static_cast<size_t>(c)] = full(g);
    } else {
      out[static_cast<size_t>(c)] = forward(g, c, rn.data(), rb.data());
    }
  }
}

CtcPrefixScorer::Prefix CtcPrefixScorer::extend(const Prefix& g, int32_t c) const {
  check(c >= 0 && c < V_ && c != blank_, "CTC prefix scores: class ", c, " is not a label");
  Prefix h;
  h.r_n.resize(static_cast<size_t>(T_));
  h.r_b.resize(static_cast<size_t>(T_));
  h.psi = forward(g, c, h.r_n.data(), h.r_b.data());
  h.last = c;
  h.length = g.length + 1;
  return h;
}

float CtcPrefixScorer::full(const Prefix& g) const {
  const auto k = static_cast<size_t>(T_ - 1);
  return log_add(g.r_n[k], g.r_b[k]);
}

}  // namespace heed::kernels
