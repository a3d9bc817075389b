// Greedy decoding of a batch with any encoder-decoder (models/seq2seq.h): at every step each
// unfinished sequence takes its most probable token, until EOS or its limit of tokens.
// Leaves out: beam search (decode/beam_search.h).
#pragma once

#include <atomic>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "heed/models/seq2seq.h"

namespace heed {

// Returns per sequence the tokens before EOS with their attention rows over that sequence's
// source in its original order (the EOS row included last; none unless attention.wanted).
// limits: the most tokens of each sequence ([batch.B]; a sequence cut there has no EOS row).
// stop: when given and set (by another thread), the search ends at its next step with
// DecodingStopped (a server's request that timed out frees the decoder).
// scores false: the tokens alone (Hypothesis::log_prob 0, no token_log_probs), so that no step
// normalises its row (CTranslate2's return_scores=False: an argmax needs no log-sum-exp).
std::vector<Hypothesis> greedy_decode(const Seq2SeqModel& model, const Seq2SeqBatch& batch,
                                      std::span<const int64_t> limits,
                                      const AttentionChoice& attention = {},
                                      const std::atomic<bool>* stop = nullptr, bool scores = true);
// The same with one limit for every sequence.
std::vector<Hypothesis> greedy_decode(const Seq2SeqModel& model, const Seq2SeqBatch& batch,
                                      int64_t max_len, const AttentionChoice& attention = {});

// A log-probability a search took at output step t (the best of a step, a forced token),
// checked: finite for any model whose logits are (log-softmax is z - max z - log sum); NaN or
// -inf means the arithmetic overflowed (the weights of a corrupt or diverged model): an Error
// rather than garbage outputs.
void check_step_log_prob(float log_prob, int64_t t);
// log Z = log sum_v exp(z_v) of a row of V logits whose best entry from Vocab::kEos on, `best`, a
// search has just found: the row's maximum is that or an entry before EOS, so one pass over the
// row instead of two.
float row_log_z(const float* logits, int64_t V, float best);

// What a search throws when its stop flag is set: nobody waits for its outputs any more.
class DecodingStopped : public Error {
 public:
  DecodingStopped() : Error("decoding stopped: its requests were cancelled") {}
};
// Throws DecodingStopped when `stop` is given and set; each search calls it once per step.
inline void check_not_stopped(const std::atomic<bool>* stop) {
  if (stop != nullptr && stop->load(std::memory_order_relaxed)) throw DecodingStopped();
}

// The search's per-row state follows IncrementalDecoder::drop_rows: entries `keep` (ascending)
// move to the front, in order, and the rest go (the vector counterpart of kernels::keep_rows).
template <class T>
void keep_entries(std::vector<T>& v, std::span<const int32_t> keep) {
  for (size_t i = 0; i < keep.size(); ++i)
    if (static_cast<size_t>(keep[i]) != i) v[i] = std::move(v[keep[i]]);  // (never a self-move)
  v.resize(keep.size());
}

}  // namespace heed
