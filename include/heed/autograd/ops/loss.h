// Losses: softmax cross-entropy with ignore-index and label smoothing, fused with the softmax.
// Leaves out: CTC (ops/ctc.h).
#pragma once

#include <span>

#include "heed/autograd/graph.h"

namespace heed {

enum class Reduction {
  Mean,  // average over the targets that are not ignored (CTC: of each loss / its target length)
  Sum,
  None,  // one loss per sequence (CTC)
};

struct CrossEntropyOptions {
  int32_t ignore_index = -1;    // targets equal to this contribute nothing (padding)
  float label_smoothing = 0.f;  // eps: q = (1 - eps) onehot + eps / V (Szegedy et al. 2016)
  Reduction reduction = Reduction::Mean;
};

// logits [..., V], one target id per row -> scalar loss (reduction Mean or Sum).
Var cross_entropy(Var logits, std::span<const int32_t> targets, CrossEntropyOptions opts = {});

}  // namespace heed
