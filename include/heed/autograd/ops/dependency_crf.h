// Syntactic attention's marginals as an op, over kernels/dependency_crf.h (the equations are
// there): the arc marginals of a first-order projective dependency model (Kim et al. 2017,
// section 3.3), each word's distribution over its parent (a word or the root), with its backward.
// Leaves out: the arc scores and the contexts (nn/syntactic_attention.h).
#pragma once

#include <cstdint>
#include <span>

#include "heed/autograd/graph.h"

namespace heed {

// theta [B, S + 1, S] arc scores, theta[b][h][m - 1] = theta(h -> m) for the head h in 0..S (0:
// the root) and the word m in 1..S; lengths [B] words per row (each in 0..S) -> mu [B, S + 1, S],
// mu[b][h][m - 1] = p(parent(m) = h): each real column sums to 1; 0 on h = m and outside a row.
Var dependency_marginals(Var theta, std::span<const int32_t> lengths);

}  // namespace heed
