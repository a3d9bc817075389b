// The one way in for inference with encoder-decoders, as CTranslate2's Translator: built from
// one model directory or an ensemble's, with typed options, it turns text into translations
// (hypotheses with their units, text, total and per-token log-probabilities and attention) and
// scores given outputs (force decoding). heed translate, attention and report, and the Python
// package and server of later issues, call it; the CLI only parses flags and prints.
// Sentences are decoded in batches of similar source length (sorted within windows of 50
// batches, as Marian's maxi-batches: less padding, and a batch's rows finish together) and
// returned in input order, window by window.
// Leaves out: search itself (beam_search.h, forced.h), loading (models/model_files.h), and any
// output format (Moses n-best lines, JSON: cli/).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "heed/decode/beam_search.h"
#include "heed/decode/compute_type.h"
#include "heed/decode/ctc_search.h"
#include "heed/models/ensemble.h"
#include "heed/models/model_files.h"
#include "heed/models/ngram_lm.h"
#include "heed/util/names.h"

namespace heed {

struct TranslatorOptions {
  ComputeType compute_type = ComputeType::Float32;  // int8: weight matrices quantised per row at
                                                    // load time (faster; scores differ slightly)
  int threads = 0;  // > 0: the threads of every kernel and GEMM (kernels/parallel.h), for the
                    // process; 0: as they are (the CLI's --threads, or all cores)
  DecodeOverrides load{};  // --wait-k, --hard-marginal: config.json overridden as each model
                           // loads (models/model_files.h)
  std::string lm{};  // CTC models: an ARPA n-gram model of the output units (`heed lm`) for the
                     // prefix search (TranslationOptions::lm_weight, lm_bonus)
};

struct TranslationOptions {
  int beam_size = 1;                // K (1: greedy decoding)
  int num_hypotheses = 1;           // the n best returned per sentence, best first (<= beam_size)
  double length_penalty = 1.0;      // alpha: finished outputs ranked by log p / (len + 1)^alpha
  double max_len_ratio = 2.0;       // outputs stop at ratio x the longest source of a batch + 10
  int64_t max_decoding_length = 0;  // and at this many units (0: the ratio only)
  int64_t max_batch_size = 32;      // sentences decoded together
  int64_t max_input_length = 1024;  // source units beyond this are dropped (as CTranslate2;
                                    // TranslationResult::truncated says so); score() refuses
                                    // longer sources and targets; 0: no limit
  bool return_scores = true;        // log_prob, score and token_log_probs (false, greedy: 0 and
                                    // none, each step's row not normalised: faster)
  bool return_attention = false;    // TranslationHypothesis::attention
  bool return_tree = false;         // TranslationResult::tree (syntactic attention's)
  int attention_layer = -1;         // Transformer: the decoder layer reported (-1: the last)
  int attention_head = -1;          // Transformer: one head of it (-1: the mean over heads)
  bool attention_distribution = false;  // hard attention: alpha_i instead of the one-hot rows
  bool replace_unknowns = false;        // each <unk> -> the source unit it attends to most
  double lm_weight = 0.5;               // CTC with TranslatorOptions::lm: w ln p_lm(output)
  double lm_bonus = 0.0;                //   + b per output unit, added to log p_ctc (beam_size > 1)
  // set by another thread: translate() ends at the next decoding step with DecodingStopped
  // (decode/greedy.h); the server's batcher sets it when every request of a batch timed out
  const std::atomic<bool>* stop = nullptr;
};

// The options within decode/limits.h's bounds, or an Error naming the first that is not (by
// its name here; the CLI's flag in parentheses). Every Translator call checks them; the
// command line, Python and the server call nothing else to check theirs.
void check_translation_options(const TranslationOptions& o);

struct TranslationHypothesis {
  std::vector<std::string> tokens;     // output units (before EOS)
  std::string text;                    // the units joined by the target side's segmenter
  double log_prob = 0;                 // log p(tokens EOS | source)
  double score = 0;                    // log_prob / (len + 1)^alpha: what ranks the n best (CTC:
                                       // log_prob)
  std::vector<float> token_log_probs;  // [len(tokens) + 1], EOS last (no EOS when cut; CTC, which
                                       // scores a labelling whole: none)
  std::vector<std::vector<float>> attention;  // [rows][len(source)], the EOS row last (CTC: each
                                              // label's alignment posterior, the blank's last)
  std::vector<int32_t> path{};  // CTC, with attention: per input position, the row of the most
                                // probable alignment (Hypothesis::path)
};

struct TranslationResult {
  std::string input;                              // the text the model read (G2P: the word)
  std::vector<std::string> source;                // its units (the first max_input_length)
  bool truncated = false;                         // the input had more units than that
  std::vector<TranslationHypothesis> hypotheses;  // best first
  // With return_tree, a model with syntactic attention: [len(source) + 1][len(source)],
  // p(parent(m) = h) at [h][m - 1], h = 0 the root (nn/syntactic_attention.h)
  std::vector<std::vector<float>> tree;
};

// Force-decoded outputs: their log-probabilities token by token.
struct ScoringResult {
  std::vector<std::string> source, tokens;    // units of both sides
  double log_prob = 0;                        // log p(tokens EOS | source)
  std::vector<float> token_log_probs;         // [len(tokens) + 1], EOS last
  std::vector<std::vector<float>> attention;  // [len(tokens) + 1][len(source)] when asked
  std::vector<int32_t> path{};                // CTC, with attention: as TranslationHypothesis's
};

class Translator {
 public:
  // Several directories: an ensemble (models/ensemble.h), whose members must read and write
  // text the same way (checked).
  explicit Translator(const std::vector<std::string>& model_dirs,
                      const TranslatorOptions& options = {});

  // Each result, in input order, as soon as its window is done; `progress` (optional) after
  // every batch with the sentences and output tokens done so far.
  using Sink = std::function<void(size_t index, TranslationResult&& result)>;
  using Progress = std::function<void(size_t sentences, size_t tokens)>;
  void translate_each(const std::vector<std::string>& sentences, const TranslationOptions& options,
                      const Sink& sink, const Progress& progress = {}) const;
  std::vector<TranslationResult> translate(const std::vector<std::string>& sentences,
                                           const TranslationOptions& options = {}) const;
  // The same for sources already split into the model's source units (words, characters or
  // SentencePiece pieces, as TranslationResult::source gives them back): no segmentation, a
  // unit outside the vocabulary is <unk>. CTranslate2's translate_batch takes token lists so.
  std::vector<TranslationResult> translate_units(
      const std::vector<std::vector<std::string>>& sources,
      const TranslationOptions& options = {}) const;

  // Online decoding of one sentence (decode/online.h, greedy): the source read one unit at a
  // time under the model's policy; `write(unit, delay)` as each output unit is written, with
  // the source units read by then. The result's one hypothesis is offline greedy decoding's.
  struct OnlineTranslation {
    TranslationResult result;
    std::vector<int64_t> delays;  // per output unit (EOS excluded)
  };
  using Write = std::function<void(const std::string& unit, int64_t delay)>;
  OnlineTranslation translate_online(const std::string& sentence,
                                     const TranslationOptions& options = {},
                                     const Write& write = {}) const;

  // The log-probabilities of `targets` given `sources` (line-parallel).
  std::vector<ScoringResult> score(const std::vector<std::string>& sources,
                                   const std::vector<std::string>& targets,
                                   const TranslationOptions& options = {}) const;

  // What a model of this kind writes for an input line: G2P models a CMUdict entry
  // ("WORD  PH PH"), the others the output text.
  std::string output_line(const TranslationResult& r, const TranslationHypothesis& h) const;
  // The line `heed translate` prints for hypothesis h of input `index`: output_line, or with
  // more than one hypothesis per input Marian's n-best line "ID ||| output ||| F0= log p |||
  // score" (what Python's translate_file writes too).
  std::string nbest_line(size_t index, const TranslationResult& r, const TranslationHypothesis& h,
                         int num_hypotheses) const;

  const Seq2SeqModel& model() const { return *model_; }  // the model, or the ensemble
  const std::vector<std::unique_ptr<ModelFiles>>& members() const { return files_; }
  const ModelFiles& text_format() const { return *files_.front(); }  // serves every member

 private:
  // translate_each's work: `read(k, r)` fills result r's input and source units of source k and
  // returns their ids.
  using ReadSource = std::function<std::vector<int32_t>(size_t k, TranslationResult& r)>;
  void decode_each(size_t n, const ReadSource& read, const TranslationOptions& options,
                   const Sink& sink, const Progress& progress) const;

  std::vector<std::unique_ptr<ModelFiles>> files_;
  std::unique_ptr<Ensemble> ensemble_;  // with several members
  const Seq2SeqModel* model_ = nullptr;
  std::unique_ptr<NgramLm> lm_;  // TranslatorOptions::lm
  std::vector<int32_t> lm_ids_;  // the model's class -> the LM's word
};

// A log-probability as heed translate prints it (Marian's "%.5f").
std::string score_text(double x);
// Whether nbest_line prints scores for this many hypotheses a sentence: n-best lines do, single
// output lines do not (a caller that writes those lines alone sets return_scores by this).
inline bool nbest_lines_have_scores(int num_hypotheses) {
  return num_hypotheses > 1;
}

}  // namespace heed
