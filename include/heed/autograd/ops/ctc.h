// The CTC loss (Graves et al. 2006) as an op: -log p(l | x) summed over every alignment of the
// labels l to the frames of x, by the forward–backward algorithm of kernels/ctc.h; its gradient
// with respect to the logits is fused with their log-softmax (softmax minus the posterior
// occupancy of each class). As PyTorch's ctc_loss: per-sequence input and target lengths, a
// blank id, reduction none | sum | mean (mean: each loss divided by its target length, then
// averaged), zero_infinity.
// Leaves out: decoding (decode/), the model around it (models/).
#pragma once

#include <span>
#include <vector>

#include "heed/autograd/graph.h"
#include "heed/autograd/ops/loss.h"

namespace heed {

struct CtcOptions {
  int32_t blank = 0;
  Reduction reduction = Reduction::Mean;
  bool zero_infinity = false;  // a sequence with no alignment counts 0 instead of +inf
  // when set, filled with the batch indices of the sequences that have no alignment (fewer
  // frames than labels plus equal neighbours); they never get a gradient, whatever the options
  std::vector<int64_t>* infeasible = nullptr;
};

// logits [B, T, C] (C classes, blank included); input_lengths [B] (frames used, <= T); targets
// [B, L] padded (row b's first target_lengths[b] ids are its labels, none the blank); ->
// [B] losses (reduction None) or a scalar.
Var ctc_loss(Var logits, std::span<const int32_t> input_lengths, std::span<const int32_t> targets,
             std::span<const int32_t> target_lengths, CtcOptions options = {});

}  // namespace heed
