// Layer normalisation over the last axis (Ba, Kiros & Hinton 2016).
// Leaves out: RMSNorm.
#pragma once

#include "heed/autograd/graph.h"

namespace heed {

// y = gamma * (x - mean) / sqrt(var + eps) + beta,  gamma, beta [D], x [..., D]
Var layer_norm(Var x, Var gamma, Var beta, float eps = 1e-5f);

}  // namespace heed
