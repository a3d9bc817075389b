// Monotonic attention (Raffel, Luong, Liu, Weiss & Eck 2017, "Online and Linear-Time Attention
// by Enforcing Monotonic Alignments") and monotonic chunkwise attention, MoChA (Chiu & Raffel
// 2018). At output step i the decoder scans the memory from where it stopped at step i - 1 and
// stops at entry j with probability
//   e_ij = g v^T / ||v|| tanh(W s_{i-1} + U h_j + b) + r                      (eq. 16)
//   p_ij = sigmoid(e_ij + eps),  eps ~ N(0, sigma^2) in training only         (§2.3)
// Training uses the expected alignment alpha_i over every place it could stop (kernels/
// monotonic.h, autograd/ops/monotonic.h); decoding is hard and linear-time (Algorithm 1):
// from t_{i-1}, the first j with p_ij >= 0.5 (e_ij >= 0), t_i = j, c_i = h_j; none left: c_i = 0
// and nothing is attended again. Energies are computed only for the entries scanned.
// MoChA attends softly over the w entries ending at the stop, with energies
//   u_ij = v'^T tanh(W' s_{i-1} + U' h_j + b')                                (eq. 14)
//   decoding: beta_ij = softmax(u_i,t-w+1..t)_j;  training: the expected beta (eq. 20)
// Leaves out: the decoder around it (models/rnn_seq2seq, Bahdanau style: queried by s_{i-1}).
#include <algorithm>
#include <cmath>
#include <vector>

#include "heed/autograd/ops.h"
#include "heed/kernels/additive.h"
#include "heed/kernels/random.h"
#include "heed/kernels/softmax.h"
#include "heed/kernels/vmath.h"
#include "heed/nn/attention/attention.h"
#include "heed/util/error.h"
#include "heed/util/json.h"

namespace heed {
namespace {

class MonotonicAttention final : public Attention {
 public:
  MonotonicAttention(const AttentionConfig& c, const Scope& s)
      : chunk_(c.kind == AttentionKind::Mocha ? c.monotonic.chunk : 0), noise_(c.monotonic.noise) {
    check(c.kind != AttentionKind::Mocha || c.monotonic.chunk >= 1,
          "mocha needs a chunk of at least 1 entry, got ", c.monotonic.chunk);
    check(c.monotonic.noise >= 0.f && std::isfinite(c.monotonic.noise),
          "monotonic attention: noise must be >= 0");
    W_ = &s.param("W", {c.attn_dim, c.query_dim}, Init::glorot_uniform());
    U_ = &s.param("U", {c.attn_dim, c.memory_dim}, Init::glorot_uniform());
    b_ = &s.param("b", {c.attn_dim}, Init::zeros());
    v_ = &s.param("v", {1, c.attn_dim}, Init::glorot_uniform());
    // g = 1 / sqrt(A) and r = the --monotonic-bias (Raffel et al. 2017, §2.5: r = -4 starts
    // every p_ij near 0.018, so early alignments spread over the source rather than stopping)
    g_ = &s.param("g", {1}, Init::constant(1.f / std::sqrt(static_cast<float>(c.attn_dim))));
    r_ = &s.param("r", {1}, Init::constant(c.monotonic.bias));
    if (chunk_ > 0) {
      Wc_ = &s.param("chunk/W", {c.attn_dim, c.query_dim}, Init::glorot_uniform());
      Uc_ = &s.param("chunk/U", {c.attn_dim, c.memory_dim}, Init::glorot_uniform());
      bc_ = &s.param("chunk/b", {c.attn_dim}, Init::zeros());
      vc_ = &s.param("chunk/v", {1, c.attn_dim}, Init::glorot_uniform());
    }
  }

  AttentionState start(Graph& g, const Memory& m) const override {
    AttentionState st;
    st.memory = m;
    st.keys = linear(m.annotations, g.param(*U_), g.param(*b_));  // U h_j + b [B, S, A]
    if (chunk_ > 0)
      st.chunk_keys = linear(m.annotations, g.param(*Uc_), g.param(*bc_));  // [B, S, A]
    return st;
  }

 protected:
  Attended compute(Graph& g, Var s_prev, AttentionState& st) const override {
    return g.training() ? expected(g, s_prev, st) : hard(g, s_prev, st);
  }

 private:
  // Training: the expectation over every stop.
  Attended expected(Graph& g, Var s_prev, AttentionState& st) const {
    const Var& Uh = st.keys;  // [B, S, A]
    const int64_t B = s_prev.dim(0), S = Uh.dim(1);
    const Var mask = g.constant(st.memory.mask);  // [B, S]: 0 / -inf
    // eq. (16): e_ij = g v^T / ||v|| tanh(W s_{i-1} + U h_j + b) + r
    Var v = g.param(*v_);                                            // [1, A]
    Var raw = additive_energy(Uh, linear(s_prev, g.param(*W_)), v);  // [B, S]
    Var scale = reshape(g.param(*g_), Shape{1, 1}) / reshape(sqrt(sum_all(v * v)), Shape{1, 1});
    Var e = raw * scale + reshape(g.param(*r_), Shape{1, 1});  // [B, S]
    if (noise_ > 0.f) {
      // eps ~ N(0, sigma^2) before the sigmoid pushes p_ij towards 0 or 1
      Tensor eps = g.alloc(Shape{B, S});
      Rng rng(g.next_stream());
      for (float& x : eps.span()) x = noise_ * rng.normal();
      e = e + g.constant(eps);
    }
    Var p = sigmoid(e + mask);  // [B, S], 0 on padding
    // alpha_0 = delta_{j,0}: before the first output the decoder stands at the first entry
    Var prev = st.previous.valid() ? st.previous : g.constant(first_entry(g, B, S));
    Var alpha = monotonic_alignment(p, prev);  // [B, S]
    if (chunk_ == 0) return {weighted_sum(alpha, st.memory.annotations), alpha, {}};
    // eq. (14): u_ij = v'^T tanh(W' s_{i-1} + U' h_j + b');  eq. (20): the expected beta
    Var Wcs = linear(s_prev, g.param(*Wc_));                            // [B, A]
    Var u = additive_energy(st.chunk_keys, Wcs, g.param(*vc_)) + mask;  // [B, S]
    Var beta = mocha_chunk(alpha, u, chunk_);                           // [B, S]
    return {weighted_sum(beta, st.memory.annotations), beta, alpha};
  }

  // Decoding: Algorithm 1, row by row, scanning only from the previous stop.
  Attended hard(Graph& g, Var s_prev, AttentionState& st) const {
    const Tensor& Uh = st.keys.value();  // [B, S, A]
    const Tensor& h = st.memory.annotations.value();
    const int64_t B = s_prev.dim(0), S = Uh.shape()[1], A = Uh.shape()[2], Dm = h.shape()[2];
    const Tensor Ws = linear(s_prev, g.param(*W_)).value();  // [B, A]
    Tensor Wcs;
    if (chunk_ > 0) Wcs = linear(s_prev, g.param(*Wc_)).value();  // [B, A]
    const float* v = v_->value.data();
    double vv = 0;
    for (int64_t a = 0; a < A; ++a) vv += double{v[a]} * v[a];
    const float scale = g_->value.data()[0] / static_cast<float>(std::sqrt(vv));
    const float r = r_->value.data()[0];
    Tensor stop = g.zeros(Shape{B, S});     // one-hot at t_i: the next step's alpha_{i-1}
    Tensor weights = g.zeros(Shape{B, S});  // what is attended: the stop, or MoChA's chunk
    Tensor context = g.zeros(Shape{B, Dm});
    std::vector<float> u;
    for (int64_t b = 0; b < B; ++b) {
      const int64_t len = st.memory.lengths[b];
      int64_t t = 0;  // where step i - 1 stopped (S: ran off the end)
      if (st.previous.valid()) {
        const int64_t j = vmath::first_at_least(st.previous.value().data() + b * S, len, 0.5f);
        t = j < len ? j : S;
      }
      // from t on, the first j with e_ij >= 0, i.e. p_ij >= 0.5 (no noise in decoding)
      const float* ws = Ws.data() + b * A;
      for (; t < len; ++t) {
        float dot = 0.f;  // v^T tanh(U h_t + b + W s_{i-1}), the training energy's kernel
        kernels::additive_energy_forward(1, 1, A, Uh.data() + (b * S + t) * A, ws, v, &dot);
        if (scale * dot + r >= 0.f) break;
      }
      if (t >= len) continue;  // nothing left to attend: c_i = 0, and so for every later step
      stop.data()[b * S + t] = 1.f;
      float* wb = weights.data() + b * S;
      if (chunk_ == 0) {
        wb[t] = 1.f;
      } else {
        // softmax of u over the chunk [t - w + 1, t]
        const int64_t from = std::max<int64_t>(0, t - chunk_ + 1);
        u.resize(static_cast<size_t>(t - from + 1));
        kernels::additive_energy_forward(1, t - from + 1, A,
                                         st.chunk_keys.value().data() + (b * S + from) * A,
                                         Wcs.data() + b * A, vc_->value.data(), u.data());
        kernels::softmax_forward(u.data(), {}, wb + from, Shape{1, t - from + 1}, false);
      }
      // c_i = sum_j weight_j h_j over the attended entries only
      float* c = context.data() + b * Dm;
      for (int64_t j = std::max<int64_t>(0, t - std::max<int64_t>(chunk_, 1) + 1); j <= t; ++j) {
        const float* hj = h.data() + (b * S + j) * Dm;
        for (int64_t d = 0; d < Dm; ++d) c[d] += wb[j] * hj[d];
      }
    }
    return {g.constant(context), g.constant(weights), chunk_ > 0 ? g.constant(stop) : Var{}};
  }

  static Tensor first_entry(Graph& g, int64_t B, int64_t S) {
    Tensor t = g.zeros(Shape{B, S});
    for (int64_t b = 0; b < B; ++b) t.data()[b * S] = 1.f;
    return t;
  }

  int64_t chunk_;                          // w (0: plain monotonic attention)
  float noise_;                            // sigma
  Parameter *W_, *U_, *b_, *v_, *g_, *r_;  // [A, Dq], [A, Dm], [A], [1, A], [1], [1]
  Parameter *Wc_ = nullptr, *Uc_ = nullptr, *bc_ = nullptr, *vc_ = nullptr;  // MoChA's u
};

}  // namespace

std::unique_ptr<Attention> make_monotonic_attention(const AttentionConfig& c, const Scope& s) {
  return std::make_unique<MonotonicAttention>(c, s);
}

void MonotonicAttentionConfig::to_json(nlohmann::json& j) const {
  j["chunk"] = chunk;
  j["monotonic_noise"] = json_number(noise);
  j["monotonic_bias"] = json_number(bias);
}

MonotonicAttentionConfig MonotonicAttentionConfig::from_json(const nlohmann::json& j) {
  return {.chunk = j.at("chunk").get<int64_t>(),
          .noise = j.at("monotonic_noise").get<float>(),
          .bias = j.at("monotonic_bias").get<float>()};
}

}  // namespace heed
