// Additive attention, Bahdanau, Cho & Bengio 2015 ("Neural Machine Translation by Jointly
// Learning to Align and Translate"), section 3.1 and appendix A.1.2.
// Leaves out: the decoder's deep output (models/rnn_seq2seq).
#include "heed/autograd/ops.h"
#include "heed/nn/attention/attention.h"

namespace heed {
namespace {

class BahdanauAttention final : public Attention {
 public:
  BahdanauAttention(const AttentionConfig& c, const Scope& s)
      : W_(&s.param("W", {c.attn_dim, c.query_dim}, Init::glorot_uniform())),
        U_(&s.param("U", {c.attn_dim, c.memory_dim}, Init::glorot_uniform())),
        b_(&s.param("b", {c.attn_dim}, Init::zeros())),
        v_(&s.param("v", {1, c.attn_dim}, Init::glorot_uniform())) {}

  AttentionState start(Graph& g, const Memory& m) const override {
    // U h_j + b, once per batch (not per decoder step): [B, S, A]
    AttentionState st;
    st.memory = m;
    st.keys = linear(m.annotations, g.param(*U_), g.param(*b_));
    return st;
  }

  Var energies(Graph& g, Var s_prev, AttentionState& st) const override {
    const Var& Uh = st.keys;  // [B, S, A]
    // eq. (6): e_ij = v^T tanh(W s_{i-1} + U h_j + b), fused: no [B, S, A] intermediates
    Var Ws = linear(s_prev, g.param(*W_));         // [B, A]
    return additive_energy(Uh, Ws, g.param(*v_));  // [B, S]
  }

 protected:
  Attended compute(Graph& g, Var s_prev, AttentionState& st) const override {
    // eq. (6): alpha_ij = exp(e_ij) / sum_k exp(e_ik), padding masked out
    Var alpha = softmax(energies(g, s_prev, st), st.memory.mask);  // [B, S]
    // eq. (5): c_i = sum_j alpha_ij h_j
    return {weighted_sum(alpha, st.memory.annotations), alpha, {}};
  }

 private:
  Parameter *W_, *U_, *b_, *v_;  // [A, Dq], [A, Dm], [A], [1, A]
};

}  // namespace

std::unique_ptr<Attention> make_bahdanau_attention(const AttentionConfig& c, const Scope& s) {
  return std::make_unique<BahdanauAttention>(c, s);
}

}  // namespace heed
