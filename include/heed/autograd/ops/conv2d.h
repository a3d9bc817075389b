// conv2d: a two-dimensional convolution without padding, channels last (kernels/conv2d.h):
//   x [B, H, W, C_in], w [C_out, k k C_in], bias [C_out] (or none) -> y [B, H', W', C_out],
//   H' = (H - k) / s + 1, W' = (W - k) / s + 1.
// Leaves out: padding and dilation.
#pragma once

#include <cstdint>

#include "heed/autograd/graph.h"

namespace heed {

struct Conv2dOptions {
  int64_t kernel = 3;  // k
  int64_t stride = 2;  // s
};

Var conv2d(Var x, Var w, Var bias, const Conv2dOptions& o = {});

}  // namespace heed
