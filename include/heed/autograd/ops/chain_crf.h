// Structured attention's marginals as an op, over kernels/chain_crf.h (the equations are there):
// the attention of segmentation attention (Kim et al. 2017, section 3.2), each position's
// marginal p(z_j = 1) under a linear-chain CRF, with its backward.
// Leaves out: the scores and the context (nn/), the tree-shaped (syntactic) attention.
#pragma once

#include <cstdint>
#include <span>

#include "heed/autograd/graph.h"

namespace heed {

// theta [B, S] unary potentials of attending, pairwise [2, 2] (A[z_j][z_j+1]), lengths [B]
// (each in 0..S; positions at or beyond a row's length get 0) -> mu [B, S] in [0, 1]
Var chain_crf_marginals(Var theta, Var pairwise, std::span<const int32_t> lengths);

}  // namespace heed
