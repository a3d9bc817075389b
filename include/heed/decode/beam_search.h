// Batched beam search for any encoder-decoder (models/seq2seq.h): every sentence of a batch keeps K
// live hypotheses, all decoded as one [N*K] batch per step; finished hypotheses are ranked by
// length-normalised log-probability, log p / len^alpha (alpha = 0: no normalisation).
// With K = 1 it returns exactly greedy decoding (tested).
// Leaves out: coverage penalties and sampling.
#pragma once

#include <cstdint>
#include <vector>

#include "heed/models/seq2seq.h"

namespace heed {

struct BeamOptions {
  int beam = 5;                 // K
  double length_penalty = 1.0;  // alpha in log p / len^alpha
  double max_len_ratio = 2.0;   // outputs stop at ratio * source length + 10 tokens
};

// src: id sequences (no BOS/EOS). Returns the best hypothesis of each sentence, with its
// attention rows (the EOS row included last, source order as given).
std::vector<Hypothesis> beam_search(const Seq2SeqModel& model,
                                    const std::vector<std::vector<int32_t>>& src,
                                    const BeamOptions& options,
                                    const AttentionChoice& attention = {});

// What `heed translate` and validation run on a batch of sources: beam search, or for K = 1
// greedy decoding (the same result, without beam bookkeeping) up to max_len_ratio x the longest
// source + 10 tokens. An empty source is read as one <unk>, so every line gets an output.
std::vector<Hypothesis> decode_batch(const Seq2SeqModel& model,
                                     std::vector<std::vector<int32_t>> src,
                                     const BeamOptions& options,
                                     const AttentionChoice& attention = {});

}  // namespace heed
