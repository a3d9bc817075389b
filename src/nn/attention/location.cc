// Location-aware attention, Chorowski, Bahdanau, Serdyuk, Cho & Bengio 2015 ("Attention-Based
// Models for Speech Recognition"), section 2.2, eqs. 8-9, and section 2.3's sharpening,
// smoothing and windowing:
//   f_i = F * alpha_{i-1}                               [B, S, K]  K filters of width r,
//                                                                  centred (eq. 8)
//   e_ij = w^T tanh(W s_{i-1} + V h_j + U f_ij + b)     [B, S]     (eq. 9)
//   alpha_ij = exp(beta e_ij) / sum_k exp(beta e_ik)    sharpening: beta = --location-sharpen
//                                                       (1: the plain softmax)
//   alpha_ij = sigmoid(e_ij) / sum_k sigmoid(e_ik)      smoothing (--location-smooth)
//   c_i = sum_j alpha_ij h_j
// alpha_0 is uniform over each utterance's frames. Windowing (--location-window w > 0): step i
// sees only the frames within w of the median of alpha_{i-1} (the frame where its cumulative
// sum reaches 1/2), so that a long input costs 2w + 1 frames a step and attention cannot jump.
// Leaves out: the decoder (models/rnn_seq2seq), content-only attention (bahdanau.cc).
#include <algorithm>
#include <limits>

#include "heed/autograd/ops.h"
#include "heed/nn/attention/attention.h"
#include "heed/util/error.h"

namespace heed {
namespace {

class LocationAttention final : public Attention {
 public:
  LocationAttention(const AttentionConfig& c, const Scope& s)
      : o_(c.location),
        W_(&s.param("W", {c.attn_dim, c.query_dim}, Init::glorot_uniform())),
        V_(&s.param("V", {c.attn_dim, c.memory_dim}, Init::glorot_uniform())),
        b_(&s.param("b", {c.attn_dim}, Init::zeros())),
        F_(&s.param("F", {c.location.filters, c.location.width}, Init::glorot_uniform())),
        U_(&s.param("U", {c.attn_dim, c.location.filters}, Init::glorot_uniform())),
        w_(&s.param("w", {1, c.attn_dim}, Init::glorot_uniform())) {
    check(o_.filters >= 1 && o_.width >= 1 && o_.width % 2 == 1,
          "location attention: filters >= 1 and an odd width, got ", o_.filters, " and ", o_.width);
    check(o_.sharpen >= 1.f, "location attention: sharpening beta must be >= 1, got ", o_.sharpen);
    check(o_.window >= 0, "location attention: a negative window");
  }

  AttentionState start(Graph& g, const Memory& m) const override {
    AttentionState st;
    st.memory = m;
    st.keys = linear(m.annotations, g.param(*V_), g.param(*b_));  // V h_j + b, once [B, S, A]
    return st;
  }

 protected:
  Attended compute(Graph& g, Var s_prev, AttentionState& st) const override {
    const int64_t B = st.memory.mask.shape()[0], S = st.memory.mask.shape()[1];
    Var prev = st.previous.valid() ? st.previous : uniform(g, st);  // alpha_{i-1} [B, S]
    // eq. 8: f_i = F * alpha_{i-1}, each frame's K features from the r around it
    Var f = conv1d(reshape(prev, Shape{B, S, 1}), g.param(*F_), Var{},
                   {.kernel = o_.width,
                    .dilation = 1,
                    .causal = false,
                    .lengths = st.memory.lengths});  // [B, S, K]
    // eq. 9: e_ij = w^T tanh(W s_{i-1} + V h_j + b + U f_ij), fused: no [B, S, A] tensor a step
    Var e = location_energy(st.keys, f, g.param(*U_), linear(s_prev, g.param(*W_)),
                            g.param(*w_));  // [B, S]
    const Tensor mask = o_.window > 0 ? window_mask(g, prev, st) : st.memory.mask;
    Var alpha;
    if (o_.smooth) {  // sigmoid(e_ij) / sum_k sigmoid(e_ik), zero outside the mask
      Var p = masked_fill(sigmoid(e), blocked(g, mask), 0.f);
      alpha = div(p, sum(p, 1, /*keepdim=*/true));
    } else {
      alpha = softmax(o_.sharpen == 1.f ? e : affine(e, o_.sharpen, 0.f), mask);
    }
    return {weighted_sum(alpha, st.memory.annotations), alpha, {}};
  }

 private:
  // alpha_0: 1 / n_b over the real frames of row b
  static Var uniform(Graph& g, const AttentionState& st) {
    const Tensor& mask = st.memory.mask;
    const int64_t B = mask.shape()[0], S = mask.shape()[1];
    Tensor u = g.alloc(mask.shape());
    for (int64_t b = 0; b < B; ++b)
      for (int64_t j = 0; j < S; ++j)
        u.data()[b * S + j] = j < st.memory.lengths[b] ? 1.f / st.memory.lengths[b] : 0.f;
    return g.constant(u);
  }

  // 1 where the additive mask blocks (-inf), else 0: masked_fill's mask
  static Tensor blocked(Graph& g, const Tensor& mask) {
    Tensor m = g.alloc(mask.shape());
    for (int64_t k = 0; k < mask.numel(); ++k) m.data()[k] = mask.data()[k] < 0.f ? 1.f : 0.f;
    return m;
  }

  // the padding mask, and -inf farther than w from the median of alpha_{i-1}
  Tensor window_mask(Graph& g, Var prev, const AttentionState& st) const {
    const Tensor& pad = st.memory.mask;
    const int64_t B = pad.shape()[0], S = pad.shape()[1];
    Tensor m = g.alloc(pad.shape());
    const float* a = prev.value().data();
    for (int64_t b = 0; b < B; ++b) {
      float cum = 0;
      int64_t median = 0;
      for (int64_t j = 0; j < S; ++j) {
        cum += a[b * S + j];
        if (cum >= 0.5f) {
          median = j;
          break;
        }
      }
      for (int64_t j = 0; j < S; ++j)
        m.data()[b * S + j] = std::abs(j - median) <= o_.window
                                  ? pad.data()[b * S + j]
                                  : -std::numeric_limits<float>::infinity();
    }
    return m;
  }

  LocationAttentionConfig o_;
  Parameter *W_, *V_, *b_, *F_, *U_, *w_;  // [A, Dq], [A, Dm], [A], [K, r], [A, K], [1, A]
};

}  // namespace

std::unique_ptr<Attention> make_location_attention(const AttentionConfig& c, const Scope& s) {
  return std::make_unique<LocationAttention>(c, s);
}

void LocationAttentionConfig::to_json(nlohmann::json& j) const {
  j["location_filters"] = filters;
  j["location_width"] = width;
  j["location_sharpen"] = sharpen;
  j["location_smooth"] = smooth;
  j["location_window"] = window;
}

LocationAttentionConfig LocationAttentionConfig::from_json(const nlohmann::json& j) {
  return {.filters = j.at("location_filters").get<int64_t>(),
          .width = j.at("location_width").get<int64_t>(),
          .sharpen = j.at("location_sharpen").get<float>(),
          .smooth = j.at("location_smooth").get<bool>(),
          .window = j.at("location_window").get<int64_t>()};
}

}  // namespace heed
