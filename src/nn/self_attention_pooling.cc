// Structured self-attention, Lin et al. 2017 (see the header).
#include "heed/nn/self_attention_pooling.h"

#include "heed/autograd/ops.h"
#include "heed/nn/attention/attention.h"

namespace heed {

SelfAttentionPooling::SelfAttentionPooling(int64_t hidden, int64_t attn_dim, int64_t hops,
                                           const Scope& s)
    : Ws1_(&s.param("W_s1", {attn_dim, hidden}, Init::glorot_uniform())),
      Ws2_(&s.param("W_s2", {hops, attn_dim}, Init::glorot_uniform())) {}

SelfAttentionPooling::Output SelfAttentionPooling::forward(Graph& g, Var H,
                                                           std::span<const int32_t> lengths) const {
  const int64_t B = H.dim(0), S = H.dim(1);
  // eq. (6): A = softmax(W_s2 tanh(W_s1 H^T)), computed row-wise as tanh(H W_s1^T) W_s2^T
  Var hidden = tanh(linear(H, g.param(*Ws1_)));                  // [B, S, d_a]
  Var scores = transpose(linear(hidden, g.param(*Ws2_)), 1, 2);  // [B, r, S]
  Tensor mask = padding_mask(lengths, S, g).reshape(Shape{B, 1, S});
  Var A = softmax(scores, mask);  // [B, r, S], each row sums to 1 over the real tokens
  // eq. (7): M = A H
  return {matmul(A, H), A};  // [B, r, 2u]
}

Var attention_penalty(Graph& g, Var A) {
  const int64_t B = A.dim(0), r = A.dim(1);
  Tensor eye = g.alloc(Shape{r, r});
  for (int64_t i = 0; i < r; ++i)
    for (int64_t j = 0; j < r; ++j) eye.data()[i * r + j] = i == j ? 1.f : 0.f;
  // eq. (8): P = || A A^T - I ||_F^2, averaged over the batch
  Var D = sub(matmul(A, A, {.trans_b = true}), g.constant(eye));  // [B, r, r]
  return affine(sum_all(mul(D, D)), 1.f / static_cast<float>(B), 0.f);
}

}  // namespace heed
