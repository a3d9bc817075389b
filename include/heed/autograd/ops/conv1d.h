// One-dimensional convolution over time as an op, over kernels/conv1d.h (the equation is
// there): causal (left padding (k - 1) d: output t sees inputs t - (k - 1) d .. t) or centred,
// dilated, on a padded batch whose entries beyond each length read as zero.
// Leaves out: the layers built from it (nn/).
#pragma once

#include <cstdint>
#include <span>

#include "heed/autograd/graph.h"

namespace heed {

struct Conv1dOptions {
  int64_t kernel = 3;                  // k taps
  int64_t dilation = 1;                // d: taps d apart
  bool causal = true;                  // false: centred (k odd)
  std::span<const int32_t> lengths{};  // [B] real lengths (empty: every position is real)
  int plan = 0;  // kernels/conv1d.h's plan: 0 chosen by shape, 1 per sequence, 2 packed,
                 // 3 direct (tests)
};

// x [B, T, C_in], w [C_out, k C_in] (tap-major: w[o, i C_in + c]), bias [C_out] or an empty
// Var -> y [B, T, C_out]
Var conv1d(Var x, Var w, Var bias, const Conv1dOptions& o);

// The receptive field of a stack of convolutions, 1 + sum_l (k_l - 1) d_l: how many inputs one
// output depends on (causal: the output and the inputs before it).
int64_t receptive_field(std::span<const Conv1dOptions> layers);

}  // namespace heed
