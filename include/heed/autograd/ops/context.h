// The context vector of an RNN attention step as one op over kernels/context.h:
//   c_b = sum_j alpha_bj h_bj
// (Bahdanau et al. 2015, eq. 5; Luong et al. 2015's c_t), equal to the batched product
// [B, 1, S] x [B, S, D] it replaces.
// Leaves out: the weights alpha (nn/attention/).
#pragma once

#include "heed/autograd/graph.h"

namespace heed {

// alpha [B, S], memory [B, S, D] -> [B, D]
Var context_vector(Var alpha, Var memory);

}  // namespace heed
