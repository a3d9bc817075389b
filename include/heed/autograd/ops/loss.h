// Losses: softmax cross-entropy with ignore-index and label smoothing, fused with the softmax.
// Leaves out: CTC (its own file, with the CTC model).
#pragma once

#include <span>

#include "heed/autograd/graph.h"

namespace heed {

enum class Reduction {
  Mean,  // average over the targets that are not ignored
  Sum,
};

struct CrossEntropyOptions {
  int32_t ignore_index = -1;    // targets equal to this contribute nothing (padding)
  float label_smoothing = 0.f;  // eps: q = (1 - eps) onehot + eps / V (Szegedy et al. 2016)
  Reduction reduction = Reduction::Mean;
};

// logits [..., V], one target id per row -> scalar loss.
Var cross_entropy(Var logits, std::span<const int32_t> targets, CrossEntropyOptions opts = {});

}  // namespace heed
