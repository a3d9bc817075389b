// Global attention of Luong, Pham & Manning 2015 ("Effective Approaches to Attention-based
// Neural Machine Translation"), section 3.1, eq. (8): the three score functions.
// Leaves out: the attentional hidden state h~_t = tanh(W_c [c_t ; h_t]) and input feeding,
// which belong to the decoder (models/rnn_seq2seq).
#include "heed/autograd/ops.h"
#include "heed/nn/attention/attention.h"
#include "heed/util/error.h"

namespace heed {
namespace {

class LuongAttention final : public Attention {
 public:
  LuongAttention(const AttentionConfig& c, const Scope& s) : kind_(c.kind) {
    if (kind_ == AttentionKind::LuongDot)
      check(c.query_dim == c.memory_dim, "luong-dot attention needs equal decoder (", c.query_dim,
            ") and annotation (", c.memory_dim, ") sizes; use luong-general");
    if (kind_ == AttentionKind::LuongGeneral)
      Wa_ = &s.param("W_a", {c.query_dim, c.memory_dim}, Init::glorot_uniform());
    if (kind_ == AttentionKind::LuongConcat) {
      // W_a [h_t ; h_s] split as W_t h_t + W_s h_s (the same matrix, W_s h_s once per batch)
      Wt_ = &s.param("W_a/target", {c.attn_dim, c.query_dim}, Init::glorot_uniform());
      Ws_ = &s.param("W_a/source", {c.attn_dim, c.memory_dim}, Init::glorot_uniform());
      va_ = &s.param("v_a", {1, c.attn_dim}, Init::glorot_uniform());
    }
  }

  AttentionState start(Graph& g, const Memory& m) const override {
    AttentionState st;
    st.memory = m;
    if (kind_ == AttentionKind::LuongGeneral)
      st.keys = linear(m.annotations, g.param(*Wa_));  // W_a h_s: [B, S, Dq]
    else if (kind_ == AttentionKind::LuongConcat)
      st.keys = linear(m.annotations, g.param(*Ws_));  // W_s h_s: [B, S, A]
    else
      st.keys = m.annotations;  // [B, S, Dm], Dm = Dq
    return st;
  }

  Var energies(Graph& g, Var h_t, AttentionState& st) const override {
    const Var& keys = st.keys;
    const int64_t B = h_t.dim(0), S = keys.dim(1);
    Var score;  // [B, S]
    if (kind_ == AttentionKind::LuongConcat) {
      // score = v_a^T tanh(W_a [h_t ; h_s])
      const int64_t A = keys.dim(2);
      Var Wh = reshape(linear(h_t, g.param(*Wt_)), Shape{B, 1, A});
      score = reshape(linear(tanh(keys + Wh), g.param(*va_)), Shape{B, S});
    } else {
      score = bilinear_scores(keys, h_t);  // dot: h_t^T h_s;  general: h_t^T (W_a h_s)
    }
    return score;
  }

 protected:
  Attended compute(Graph& g, Var h_t, AttentionState& st) const override {
    // eq. (7): a_t(s) = softmax over the source, padding masked out
    Var alpha = softmax(energies(g, h_t, st), st.memory.mask);
    return {weighted_sum(alpha, st.memory.annotations), alpha, {}};
  }

 private:
  AttentionKind kind_;
  Parameter* Wa_ = nullptr;                                  // [Dq, Dm]
  Parameter *Wt_ = nullptr, *Ws_ = nullptr, *va_ = nullptr;  // [A, Dq], [A, Dm], [1, A]
};

}  // namespace

std::unique_ptr<Attention> make_luong_attention(const AttentionConfig& c, const Scope& s) {
  return std::make_unique<LuongAttention>(c, s);
}

}  // namespace heed
