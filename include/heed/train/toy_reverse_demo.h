// `heed demo`'s training of the toy reversal model (models/toy_reverse.h): Adam with clipping on
// freshly sampled batches, then the sequence accuracy on 1,000 new sequences and a few examples.
// Leaves out: real data and the shared loop (train/loop.h), which this toy predates.
#pragma once

#include <cstdint>
#include <iosfwd>

#include "heed/models/toy_reverse.h"

namespace heed::toy {

struct ReverseDemoOptions {
  ReverseTask task;
  GruSeq2SeqConfig model;
  int64_t steps = 1500;
  int64_t batch = 64;
  float lr = 3e-3f;
  float clip = 5.f;
  uint64_t seed = 1;
  int examples = 5;  // printed after training
};

struct ReverseDemoResult {
  double final_loss = 0;
  double sequence_accuracy = 0;  // exact matches on 1000 fresh sequences
  double seconds = 0;
};

// Trains and evaluates; progress and examples go to `log` (nullptr: silent).
ReverseDemoResult run_reverse_demo(const ReverseDemoOptions& options, std::ostream* log);

}  // namespace heed::toy
