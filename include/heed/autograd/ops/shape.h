// Shape ops: reshape, transpose, permute, concat, slice, select.
// reshape and slices of the first axis are views (no copy); the rest copy.
// Leaves out: gather/scatter by index (embedding.h has the one models need).
#pragma once

#include <span>
#include <vector>

#include "heed/autograd/graph.h"

namespace heed {

Var reshape(Var x, const Shape& shape);
Var transpose(Var x, int axis0, int axis1);
// y.dim(i) = x.dim(perm[i])
Var permute(Var x, std::span<const int> perm);
Var permute(Var x, std::initializer_list<int> perm);
Var concat(std::span<const Var> xs, int axis);
Var concat(std::initializer_list<Var> xs, int axis);
// Entries [start, start + length) of `axis`.
Var slice(Var x, int axis, int64_t start, int64_t length);
// Entry `index` of `axis`, which is removed.
Var select(Var x, int axis, int64_t index);

}  // namespace heed
