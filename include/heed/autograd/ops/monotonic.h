// Monotonic attention's expectations as ops, over kernels/monotonic.h (the equations are there):
// the expected alignment of one decoder step (Raffel et al. 2017) and MoChA's chunkwise
// weights (Chiu & Raffel 2018), each with its backward.
// Leaves out: the energies and hard decoding (nn/attention/monotonic.cc).
#pragma once

#include <cstdint>

#include "heed/autograd/graph.h"

namespace heed {

// p [B, S] stopping probabilities (0 on padding), prev [B, S] alpha_{i-1} -> alpha_i [B, S]
Var monotonic_alignment(Var p, Var prev);
// p [R, T, S] -> alpha [R, T, S]: the expected alignments of T steps in turn, alpha_{-1} =
// delta_{j,0} (monotonic multihead attention: R = B h rows, each head its own recursion)
Var monotonic_alignments(Var p);
// alpha [B, S], u [B, S] chunk energies (-inf on padding), w >= 1 -> beta [B, S]
Var mocha_chunk(Var alpha, Var u, int64_t w);

}  // namespace heed
