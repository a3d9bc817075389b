// Local attention of Luong, Pham & Manning 2015, section 3.2: attend to a window
// [p_t - D, p_t + D] around an aligned source position p_t.
//   local-m (monotonic):  p_t = t
//   local-p (predictive): p_t = S * sigmoid(v_p^T tanh(W_p h_t))            eq. (9)
//   a_t(s) = align(h_t, h_s) exp(-(s - p_t)^2 / (2 sigma^2)),  sigma = D/2  eq. (10)
// with align the softmax of the general score h_t^T W_a h_s over the window (padding and
// positions outside the window masked out). S is each sequence's own source length.
// Leaves out: renormalising after the Gaussian (the paper does not).
#include <cmath>
#include <limits>

#include "heed/autograd/ops.h"
#include "heed/nn/attention/attention.h"
#include "heed/util/error.h"

namespace heed {
namespace {

class LocalAttention final : public Attention {
 public:
  LocalAttention(const AttentionConfig& c, const Scope& s)
      : predictive_(c.kind == AttentionKind::LocalP), D_(c.local.window) {
    check(D_ >= 1, "local attention needs a window half-width D >= 1, got ", D_);
    Wa_ = &s.param("W_a", {c.query_dim, c.memory_dim}, Init::glorot_uniform());
    if (predictive_) {
      Wp_ = &s.param("W_p", {c.attn_dim, c.query_dim}, Init::glorot_uniform());
      vp_ = &s.param("v_p", {1, c.attn_dim}, Init::glorot_uniform());
    }
  }

  AttentionState start(Graph& g, const Memory& m) const override {
    AttentionState st;
    st.memory = m;
    st.keys = linear(m.annotations, g.param(*Wa_));  // W_a h_s: [B, S, Dq]
    return st;
  }

 protected:
  Attended compute(Graph& g, Var h_t, AttentionState& st) const override {
    const Memory& memory = st.memory;
    const int64_t B = h_t.dim(0), S = st.keys.dim(1);
    Tensor pos = g.alloc(Shape{1, S}), len = g.alloc(Shape{B, 1});
    for (int64_t s = 0; s < S; ++s) pos.data()[s] = static_cast<float>(s);
    for (int64_t b = 0; b < B; ++b) len.data()[b] = static_cast<float>(memory.lengths[b]);
    Var positions = g.constant(pos);  // s: [1, S]
    Var lengths = g.constant(len);    // S_b: [B, 1]
    Var p;                            // p_t [B, 1]
    if (predictive_) {
      // eq. (9): p_t = S * sigmoid(v_p^T tanh(W_p h_t))
      p = lengths * sigmoid(linear(tanh(linear(h_t, g.param(*Wp_))), g.param(*vp_)));
    } else {
      Tensor pm = g.alloc(Shape{B, 1});  // p_t = t, inside each sequence
      for (int64_t b = 0; b < B; ++b)
        pm.data()[b] = static_cast<float>(std::min<int64_t>(st.step, memory.lengths[b] - 1));
      p = g.constant(pm);
    }
    // The window [p_t - D, p_t + D] (from p_t's value), on top of the padding mask.
    Tensor mask = g.alloc(Shape{B, S});
    const float inf = std::numeric_limits<float>::infinity();
    for (int64_t b = 0; b < B; ++b) {
      float pt = p.value().data()[b];
      for (int64_t s = 0; s < S; ++s) {
        bool inside = std::fabs(static_cast<float>(s) - pt) <= static_cast<float>(D_);
        mask.data()[b * S + s] = inside ? memory.mask.data()[b * S + s] : -inf;
      }
      // keep at least the nearest real position, so the softmax has a support
      auto nearest =
          std::min<int64_t>(std::max<int64_t>(std::lround(pt), 0), memory.lengths[b] - 1);
      mask.data()[b * S + nearest] = 0.f;
    }
    // align(h_t, h_s) = softmax over the window of h_t^T W_a h_s
    Var score = bilinear_scores(st.keys, h_t);
    Var align = softmax(score, mask);
    // eq. (10): a_t(s) = align * exp(-(s - p_t)^2 / (2 sigma^2)),  sigma = D / 2
    const float sigma = static_cast<float>(D_) / 2.f;
    Var d = positions - p;  // [B, S]
    Var alpha = align * exp(d * d * (-1.f / (2.f * sigma * sigma)));
    return {weighted_sum(alpha, memory.annotations), alpha, {}};
  }

 private:
  bool predictive_;
  int64_t D_;
  Parameter* Wa_ = nullptr;                  // [Dq, Dm]
  Parameter *Wp_ = nullptr, *vp_ = nullptr;  // [A, Dq], [1, A]
};

}  // namespace

std::unique_ptr<Attention> make_local_attention(const AttentionConfig& c, const Scope& s) {
  return std::make_unique<LocalAttention>(c, s);
}

void LocalAttentionConfig::to_json(nlohmann::json& j) const {
  j["window"] = window;
}

LocalAttentionConfig LocalAttentionConfig::from_json(const nlohmann::json& j) {
  return {.window = j.at("window").get<int64_t>()};
}

}  // namespace heed
