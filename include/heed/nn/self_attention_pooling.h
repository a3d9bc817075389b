// Structured self-attention over a sequence of hidden states (Lin et al. 2017, "A Structured
// Self-attentive Sentence Embedding", section 2): r attention hops over H, each a distribution
// over the positions, turning a variable-length H into a fixed r x 2u matrix M.
//   A = softmax(W_s2 tanh(W_s1 H^T))     eq. (6)    A [r, n], W_s1 [d_a, 2u], W_s2 [r, d_a]
//   M = A H                              eq. (7)    M [r, 2u]
//   P = || A A^T - I ||_F^2              eq. (8)    the penalty that keeps the hops apart
// r = 1 is the single-vector form a = softmax(w_s2 tanh(W_s1 H^T)) (eq. 5). Padding positions
// are masked out of the softmax.
// Leaves out: the BiLSTM below it (nn/rnn.h) and the classifier above (models/).
#pragma once

#include <cstdint>
#include <span>

#include "heed/autograd/graph.h"
#include "heed/nn/init.h"

namespace heed {

class SelfAttentionPooling {
 public:
  // hidden: 2u, the size of each h_t; attn_dim: d_a; hops: r
  SelfAttentionPooling(int64_t hidden, int64_t attn_dim, int64_t hops, const Scope& scope);
  struct Output {
    Var M;  // [B, r, 2u] sentence embeddings, one row per hop
    Var A;  // [B, r, S] attention of each hop over the positions (0 on padding)
  };
  // H [B, S, 2u]; lengths [B] (positions >= length are padding)
  Output forward(Graph& g, Var H, std::span<const int32_t> lengths) const;

 private:
  Parameter *Ws1_, *Ws2_;  // [d_a, 2u], [r, d_a]
};

// P = sum_b || A_b A_b^T - I ||_F^2 / B, the batch mean of eq. (8):  A [B, r, S] -> []
Var attention_penalty(Graph& g, Var A);

}  // namespace heed
