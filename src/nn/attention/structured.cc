// Structured attention of Kim, Denton, Hoang & Rush 2017 ("Structured Attention Networks"):
// attention weights that are marginals of a graphical model instead of a softmax.
//   sigmoid     section 3.1: z_j independent Bernoulli, p(z_j = 1) = sigmoid(theta_j)
//   structured  section 3.2: z a linear-chain CRF with the unary potentials theta_j and learned
//               pairwise potentials A[z_j][z_j+1] (attending to contiguous segments);
//               p(z_j = 1) by forward–backward (autograd/ops/chain_crf.h)
// with theta_j = h_t^T W_a h_j (the bilinear score of the paper's translation experiments,
// Luong's "general") and the context c = sum_j p(z_j = 1) h_j (eq. 3): the weights are not a
// distribution over the source, each is a probability of its own.
// Leaves out: the decoder (Luong's, input feeding: models/rnn_seq2seq), the syntactic
// (tree) attention.
#include "heed/autograd/ops.h"
#include "heed/nn/attention/attention.h"

namespace heed {
namespace {

class StructuredAttention final : public Attention {
 public:
  StructuredAttention(const AttentionConfig& c, const Scope& s) : kind_(c.kind) {
    Wa_ = &s.param("W_a", {c.query_dim, c.memory_dim}, Init::glorot_uniform());
    // A[z_j][z_j+1], zero at first: the chain starts as independent Bernoullis (sigmoid's)
    if (kind_ == AttentionKind::Structured) A_ = &s.param("pairwise", {2, 2}, Init::zeros());
  }

  AttentionState start(Graph& g, const Memory& m) const override {
    AttentionState st;
    st.memory = m;
    st.keys = linear(m.annotations, g.param(*Wa_));  // W_a h_j: [B, S, Dq]
    return st;
  }

 protected:
  Attended compute(Graph& g, Var h_t, AttentionState& st) const override {
    Var theta = bilinear_scores(st.keys, h_t);  // theta_j = h_t^T (W_a h_j)  [B, S]
    Var mu = kind_ == AttentionKind::Structured
                 ? chain_crf_marginals(theta, g.param(*A_), st.memory.lengths)
                 : sigmoid(theta + g.constant(st.memory.mask));  // padding: sigmoid(-inf) = 0
    return {weighted_sum(mu, st.memory.annotations), mu, {}};    // eq. 3
  }

 private:
  AttentionKind kind_;
  Parameter* Wa_ = nullptr;  // [Dq, Dm]
  Parameter* A_ = nullptr;   // [2, 2]
};

}  // namespace

std::unique_ptr<Attention> make_structured_attention(const AttentionConfig& c, const Scope& s) {
  return std::make_unique<StructuredAttention>(c, s);
}

}  // namespace heed
