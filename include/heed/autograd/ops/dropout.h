// Inverted dropout (Srivastava et al. 2014).
// Leaves out: variational (per-sequence) masks; models that want them build one with mul().
#pragma once

#include "heed/autograd/graph.h"

namespace heed {

// Training: y = x * keep / (1 - p), keep ~ Bernoulli(1 - p) from a counter-based hash of the
// graph's seed, so the mask is the same for any thread count and is regenerated in backward
// instead of stored. Inference, or p = 0: y = x (the same node).
Var dropout(Var x, float p);
// The same with the mask's stream given (from dropout_stream()): two tensors of one shape
// dropped with one stream share their mask (REINFORCE's reward and its baseline, computed from
// two read-out inputs, see models/rnn_seq2seq).
Var dropout(Var x, float p, uint64_t stream);
// The stream dropout(x, p) would draw from g (Graph::next_stream(), drawn only in training with
// p > 0, as dropout(x, p) draws it; 0 otherwise, where no mask is made).
uint64_t dropout_stream(Graph& g, float p);

}  // namespace heed
