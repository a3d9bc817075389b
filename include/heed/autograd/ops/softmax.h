// Softmax and log-softmax over the last axis with an optional additive mask, and masked fill.
// Leaves out: the fused attention kernel (its own family, with the Transformer).
#pragma once

#include "heed/autograd/graph.h"

namespace heed {

// softmax(x + mask)_j = exp(x_j + m_j) / sum_k exp(x_k + m_k). The mask (a constant, not
// differentiated) broadcasts to x and holds 0 for allowed and -inf for blocked positions
// (e.g. padding [B, 1, S] or causal [T, T]); an undefined Tensor means no mask.
Var softmax(Var x, const Tensor& mask = {});
Var log_softmax(Var x, const Tensor& mask = {});

// y = value where mask != 0, else x (mask broadcasts to x). No gradient flows to filled places.
Var masked_fill(Var x, const Tensor& mask, float value);

}  // namespace heed
