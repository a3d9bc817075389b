// Syntactic attention (Kim, Denton, Hoang & Rush 2017, "Structured Attention Networks", section
// 3.3) as an encoder layer: each word attends to its parent and its children in a latent
// projective dependency tree, the attention weights being the tree's arc marginals.
//   theta(h -> m) = p_h^T W x_m + u^T p_h       bilinear arc scores, p_0 = r (a learned root),
//                                               p_h = x_h for the words h = 1..n
//   mu(h -> m)    = p(parent(m) = h | x)        Eisner's inside-outside (autograd dependency_crf)
//   c_m  = sum_h mu(h -> m) p_h                 the soft parent (the paper's context)
//   c~_h = sum_m mu(h -> m) x_m                 the soft children
//   x'_m = x_m + W_o [c_m ; c~_m] + b_o         back to the encoder's width, residually
// so that it sits on any sequence encoder (wrap_syntactic_attention) and whatever reads the
// encoder (a decoder's attention, a classifier's pooling) reads x' unchanged in shape.
// Leaves out: an MLP arc scorer (the paper's code: w^T tanh(W_1 p_h + W_2 x_m), then tanh),
// single-root trees, non-projective trees.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "heed/autograd/graph.h"
#include "heed/autograd/parameter.h"
#include "heed/nn/sequence_encoder.h"

namespace heed {

class SyntacticAttention {
 public:
  SyntacticAttention(int64_t dim, const Scope& scope);  // D, the states' width
  struct Output {
    Var states;   // [B, S, D]: x'
    Var parents;  // [B, S + 1, S]: mu(h -> m) at [b][h][m - 1], h = 0 the root
  };
  // x [B, S, D] (padding rows finite, unused), lengths [B] in 0..S
  Output forward(Graph& g, Var x, std::span<const int32_t> lengths) const;

 private:
  int64_t dim_;
  Parameter *root_, *W_, *u_, *Wo_, *bo_;  // [D], [D, D], [1, D], [D, 2D], [D]
};

// `inner` followed by syntactic attention over its states (parameters under scope/"syntactic");
// the same width and summary; Output::tree holds the parent marginals when asked
// (Options::tree).
std::unique_ptr<SequenceEncoder> wrap_syntactic_attention(std::unique_ptr<SequenceEncoder> inner,
                                                          const Scope& scope);

}  // namespace heed
