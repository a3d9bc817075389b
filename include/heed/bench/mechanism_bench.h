// `heed bench attention --mechanism LIST`: the training cost of attention mechanisms on one
// model, the RNN encoder-decoder of the Multi30k recipe (recipes/multi30k-bahdanau.toml:
// bidirectional GRU encoder 256 per direction, embeddings 256, GRU decoder 512, attention
// dimension 512), vocabularies of 8,000 a side, batches of 64 random sentences of 13 source
// and 13 target tokens (Multi30k's mean lengths), Adam. For each mechanism (any --attention
// name; NAME+syntactic adds syntactic attention over the encoder), the median milliseconds of
// a training step (forward, backward, update) over --steps steps in --rounds rounds that
// alternate the mechanisms (a machine's drift spreads over all of them), and its ratio to the
// first mechanism listed. Kim et al. 2017 report structured attention about 5x slower to train
// than simple attention on their translation model.
// Leaves out: decoding, real data (docs/RESULTS.md has the trained models).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>

namespace heed {

struct MechanismBenchOptions {
  // the first is the base of the ratios
  std::string mechanisms = "luong-general,bahdanau,sigmoid,structured,luong-general+syntactic";
  int64_t batch = 64;
  int64_t src_len = 13, tgt_len = 13;
  int steps = 10, rounds = 3;
  uint64_t seed = 1;
};

void run_mechanism_bench(const MechanismBenchOptions& options, std::ostream& out);

}  // namespace heed
