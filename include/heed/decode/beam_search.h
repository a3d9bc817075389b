// Batched beam search for any encoder-decoder (models/seq2seq.h): every sentence of a batch keeps K
// live hypotheses, all decoded as one [N*K] batch per step; finished hypotheses are ranked by
// length-normalised log-probability, log p / len^alpha (alpha = 0: no normalisation).
// With K = 1 it returns exactly greedy decoding (tested). A hypothesis finishes when its end of
// sentence is among the step's K best candidates (CTranslate2's, Marian's and fairseq's rule; one
// further down is dropped). A sentence stops at its K-th finished hypothesis, so up to K of them
// can be returned, best first (`heed translate --n-best`).
// Leaves out: coverage penalties and sampling.
#pragma once

#include <atomic>
#include <cstdint>
#include <span>
#include <vector>

#include "heed/models/seq2seq.h"

namespace heed {

struct CtcLm;  // decode/ctc_search.h

struct BeamOptions {
  int beam = 5;                   // K
  double length_penalty = 1.0;    // alpha in log p / len^alpha
  double max_len_ratio = 2.0;     // outputs stop at ratio * source length + 10 tokens
  int64_t max_length = 0;         // and at this many tokens (0: no limit of its own)
  int n_best = 1;                 // hypotheses returned per sentence by the *_n_best calls (<= K)
  const CtcLm* ctc_lm = nullptr;  // CTC models: an n-gram LM in the prefix search (K > 1)
  bool scores = true;             // K 1: log-probabilities kept (greedy_decode's `scores`)
  // set by another thread: the search ends at its next step with DecodingStopped (greedy.h)
  const std::atomic<bool>* stop = nullptr;
};

// The options within decode/limits.h's bounds (beam, n-best, ratio, lengths, penalty), or an
// Error naming the first that is not. Every search calls it.
void check_beam_options(const BeamOptions& o);
// The same bounds for any surface's names of these options (TranslationOptions' with the CLI's
// flags: "beam_size (--beam)"): the one place they are checked.
struct SearchOptionNames {
  const char *beam, *n_best, *beam_short, *length_penalty, *max_len_ratio, *max_length, *by_ratio;
};
void check_search_options(int64_t beam, int64_t n_best, double length_penalty, double max_len_ratio,
                          int64_t max_length, const SearchOptionNames& names);

// The most output tokens for a source of `source_length` units. Each sentence of a batch has its
// own limit, so its output does not depend on the sentences decoded beside it.
int64_t output_limit(const BeamOptions& o, int64_t source_length);

// The rank of a finished hypothesis: log p / (len + 1)^alpha, EOS counted (alpha = 0: log p).
double normalised_score(const Hypothesis& h, double alpha);

// src: id sequences (no BOS/EOS). Returns up to options.n_best finished hypotheses of each
// sentence, best first by normalised_score, each with its attention rows (the EOS row included
// last, source order as given).
std::vector<std::vector<Hypothesis>> beam_search_n_best(
    const Seq2SeqModel& model, const std::vector<std::vector<int32_t>>& src,
    const BeamOptions& options, const AttentionChoice& attention = {});

// The same on a batch as the model reads it (a recognizer's frames), limit[n] output tokens at
// most for source n.
std::vector<std::vector<Hypothesis>> beam_search_batch(const Seq2SeqModel& model,
                                                       const Seq2SeqBatch& batch,
                                                       std::span<const int64_t> limit,
                                                       const BeamOptions& options,
                                                       const AttentionChoice& attention = {});

// The best hypothesis of each sentence (beam_search_n_best with n_best = 1).
std::vector<Hypothesis> beam_search(const Seq2SeqModel& model,
                                    const std::vector<std::vector<int32_t>>& src,
                                    const BeamOptions& options,
                                    const AttentionChoice& attention = {});

// What `heed translate` and validation run on a batch of sources: beam search, or for K = 1
// greedy decoding (the same result, without beam bookkeeping), each sentence up to its
// output_limit. An empty source is read as one <unk>, so every line gets an output.
std::vector<Hypothesis> decode_batch(const Seq2SeqModel& model,
                                     std::vector<std::vector<int32_t>> src,
                                     const BeamOptions& options,
                                     const AttentionChoice& attention = {});
// The same, up to options.n_best hypotheses per sentence, best first (greedy: n_best = 1 only).
std::vector<std::vector<Hypothesis>> decode_n_best(const Seq2SeqModel& model,
                                                   std::vector<std::vector<int32_t>> src,
                                                   const BeamOptions& options,
                                                   const AttentionChoice& attention = {});

}  // namespace heed
