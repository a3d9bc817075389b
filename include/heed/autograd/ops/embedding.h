// Embedding lookup with a row-sparse gradient.
// Leaves out: max-norm renormalisation and padding_idx (mask the loss instead).
#pragma once

#include <span>

#include "heed/autograd/graph.h"

namespace heed {

// y [ids_shape..., D] = table [V, D] rows at ids. Backward adds each row of dy to its table
// row, touching only those rows (and recording them when the table is a row-sparse parameter).
// An id outside [0, V) is an error naming it.
Var embedding(Var table, std::span<const int32_t> ids, const Shape& ids_shape);

}  // namespace heed
