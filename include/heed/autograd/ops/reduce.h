// Reductions over one axis (sum, mean, max) and over everything (sum_all, mean_all).
// Leaves out: multi-axis reductions (chain them) and min (use -max(-x)).
#pragma once

#include "heed/autograd/graph.h"

namespace heed {

Var sum(Var x, int axis, bool keepdim = false);
Var mean(Var x, int axis, bool keepdim = false);
Var max(Var x, int axis, bool keepdim = false);  // the gradient goes to the first maximum
Var sum_all(Var x);                              // [] (a scalar)
Var mean_all(Var x);

}  // namespace heed
