// The batches of one training epoch, bucketed by length (as Marian's and fairseq's): shuffle
// the examples, sort windows of 50 batches' worth by source length (little padding), cut the
// sorted windows into batches of a number of sentences or of tokens, shuffle the batches.
// A pure function of (lengths, options, seed, epoch), so that a resumed run replays the same
// batches from its recorded position.
// Leaves out: reading the examples (the trainers hold them) and building tensors (make_batch).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace heed {

struct BatchOptions {
  int64_t sentences = 64;  // sentences per batch (and, times 50, the sorting window)
  int64_t tokens = 0;      // > 0: batches by size instead, at most `tokens` padded positions,
                           // i.e. sentences x max(source, target length) in the batch
};

// src_len: source length of each example (the sort key); cost: max(source, target) length.
// Returns the examples' indices, batch by batch; every example appears exactly once.
std::vector<std::vector<size_t>> epoch_batches(std::span<const int64_t> src_len,
                                               std::span<const int64_t> cost,
                                               const BatchOptions& options, uint64_t seed,
                                               int64_t epoch);

}  // namespace heed
