// Forced decoding: the model's log-probability of given outputs, token by token, with the
// attention of each step (marian-scorer, CTranslate2's score_batch). The incremental decoder
// is fed the given tokens instead of its own choices, so the scores are the ones search would
// give those tokens (an ensemble's included).
// Leaves out: search (decode/beam_search.h) and text (decode/translator.h).
#pragma once

#include <cstdint>
#include <vector>

#include "heed/models/seq2seq.h"

namespace heed {

// src, tgt: id sequences (no BOS/EOS), line-parallel. Returns per pair a Hypothesis of tgt:
// token_log_probs [len(tgt) + 1] (EOS last), their sum, and with attention.wanted the rows
// over the source in its original order. An empty source is read as one <unk>.
std::vector<Hypothesis> force_decode(const Seq2SeqModel& model,
                                     std::vector<std::vector<int32_t>> src,
                                     const std::vector<std::vector<int32_t>>& tgt,
                                     const AttentionChoice& attention = {});

}  // namespace heed
