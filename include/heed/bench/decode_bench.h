// `heed bench decode --model DIR --src FILE`: the eight decoding cells of issue 70 for any model
// heed translates with (CTranslate2's comparison: greedy and beam search, one sentence at a time
// and batches, float32 and int8 weights). Each round translates FILE's lines once in every cell,
// the cells one after another, so that a machine's drift spreads over all of them. Per cell, one
// JSON line: sentences and output tokens a second (the median round and the best), the ratio of
// a batched cell to the same cell at batch 1, and a hash of the outputs, so that two cells, two
// machines or another toolkit's translations of the same file can be checked for equal outputs.
// Loading and quantising are outside the clock; one untimed pass over the first sentences warms
// each cell.
// Leaves out: CTranslate2 itself (not installable here; `heed export --format ctranslate2` gives
// it the same weights), and input that is not one sentence a line.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>

#include "heed/decode/compute_type.h"

namespace heed {

struct DecodeBenchOptions {
  std::string model;                   // a model directory
  std::string src;                     // one source sentence a line
  int beam = 5;                        // the beam cells' width (the others are greedy)
  int64_t batch = 32;                  // the batched cells' sentences a batch
  int rounds = 3;                      // passes over FILE in every cell
  int64_t max_sentences = 0;           // > 0: FILE's first lines only
  std::optional<ComputeType> compute;  // one compute type only (default: float32 and int8)
};

void run_decode_bench(const DecodeBenchOptions& options, std::ostream& out);

}  // namespace heed
