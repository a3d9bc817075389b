// Decoding a CTC model's per-frame class log-probabilities [T, C] into labels (Graves et al.
// 2006, §3.2): a labelling is the collapse of a frame-level path (repeats merged, blanks
// dropped), and its probability the sum over all paths that collapse to it.
// - Best path: the most probable class of every frame, collapsed. The labelling of the most
//   probable path, which need not be the most probable labelling.
// - Prefix beam search (Graves & Jaitly 2014; Hannun et al. 2014): after each frame the K most
//   probable prefixes, each with the probability of its paths that end in a blank and of those
//   that end in its last label, so that the paths of one labelling are summed, not competing.
// - A model's batch (ctc_decode_n_best, ctc_force_decode): what heed translate, score and
//   validation run for an alignment-free model (models/seq2seq.h FrameLabeller).
// - An n-gram language model in the prefix search (Hannun et al. 2014, eq. 2): prefixes are
//   ranked by log p_ctc(l | x) + w ln p_lm(l) + b |l|, where p_lm(l) includes l's </s>
//   (Rao et al. 2015 add a 5-gram this way), so the n best are a mix of the two.
// Leaves out: word-level LMs over character outputs (heed's LM reads the output units).
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <vector>

#include "heed/models/seq2seq.h"

namespace heed {

// log_probs [T, C]; the labels of the best path.
std::vector<int32_t> ctc_best_path(const float* log_probs, int64_t T, int64_t C, int32_t blank);

class NgramLm;

// A language model over the model's labels, for the prefix search.
struct CtcLm {
  const NgramLm* lm = nullptr;
  std::vector<int32_t> ids{};  // the model's class -> the LM's word id (its <unk> when it lacks it)
  double weight = 0.5;         // w: times the LM's natural-log probability
  double bonus = 0.0;          // b: added per label (balances the LM's preference for short output)
};

struct CtcBeamOptions {
  int beam = 5;               // K prefixes kept after every frame
  int n_best = 1;             // labellings returned, most probable first (<= beam)
  const CtcLm* lm = nullptr;  // ranks prefixes with an n-gram model too
};

struct CtcHypothesis {
  std::vector<int32_t> labels;
  double log_prob = 0;  // log p(labels | x): over all the paths that collapse to them
  double score = 0;     // what ranked it: log_prob, plus w ln p_lm(labels </s>) + b |labels|
};

// w ln p_lm(labels </s>) + b |labels| (0 without a model).
double ctc_lm_score(const CtcLm* lm, const std::vector<int32_t>& labels);

// The prefix beam search one frame at a time: what ctc_prefix_beam_search runs over a whole
// utterance, and a stream (decode/recognizer_stream.h) as its frames arrive.
class CtcPrefixSearch {
 public:
  CtcPrefixSearch(int64_t C, int32_t blank, const CtcBeamOptions& options);
  void advance(const float* y);       // the next frame's log-probabilities [C]
  std::vector<int32_t> best() const;  // the prefix ranked first so far
  // The labels every kept prefix begins with: whatever the frames to come, the answer begins
  // with them (every later prefix extends a kept one), up to the rescoring of finish().
  std::vector<int32_t> stable() const;
  // The answer after the last frame, up to n_best labellings: the kept prefixes and the best
  // path's labelling of all the frames seen, log_probs [T, C], rescored exactly.
  std::vector<CtcHypothesis> finish(const float* log_probs, int64_t T, int n_best) const;

 private:
  static constexpr double kNegInf = -std::numeric_limits<double>::infinity();
  // A prefix's paths so far: log p of those ending in a blank, and in its last label; and the
  // LM's terms of the prefix, w ln p_lm(l) + b |l|.
  struct Score {
    double blank = kNegInf, label = kNegInf, lm = 0;
    double total() const;  // log(e^blank + e^label)
    double ranked() const { return total() + lm; }
  };
  using Prefixes = std::map<std::vector<int32_t>, Score>;
  const std::vector<double>& lm_of(const std::vector<int32_t>& prefix);
  int64_t C_;
  int32_t blank_;
  int beam_;
  const CtcLm* lm_;
  Prefixes beams_;
  std::map<std::vector<int32_t>, std::vector<double>> lm_steps_;  // per prefix, as it grows
};

// log_probs [T, C] -> up to n_best labellings, most probable first (ties: in the ids'
// lexicographic order), each with its exact log-probability: the K prefixes kept after the last
// frame and the best path's labelling are rescored by the forward algorithm, so the answer is
// never less probable than best path's (with an LM: never of a lower score).
std::vector<CtcHypothesis> ctc_prefix_beam_search(const float* log_probs, int64_t T, int64_t C,
                                                  int32_t blank, const CtcBeamOptions& options);

// The most probable alignment of `labels` to log_probs [T, C] (the Viterbi path through the
// CTC lattice): per frame its state s of l' = (blank, l_1, blank, ..., l_L, blank), so that
// l'_s is the frame's class; for the best path's own labels it is the best path. Empty when no
// alignment exists.
std::vector<int32_t> ctc_best_alignment(const float* log_probs, int64_t T, int64_t C, int32_t blank,
                                        const std::vector<int32_t>& labels);

// log p(labels | x) of log_probs [T, C], exactly (the CTC forward algorithm); -inf when no path
// gives them.
double ctc_log_prob(const float* log_probs, int64_t T, int64_t C, int32_t blank,
                    const std::vector<int32_t>& labels);

// Labellings of a batch of sources (id sequences, no BOS/EOS; an empty one is read as <unk>):
// up to n_best per source, best first (beam 1: the best path), as Hypotheses with their exact
// log p(labels | x) and no token_log_probs (CTC scores a labelling whole). With `attention`,
// its picture: one row per label, its posterior over the source units (the alignment's
// occupancy, the K positions of a unit summed, the row normalised to sum 1), then the blank's.
std::vector<std::vector<Hypothesis>> ctc_decode_n_best(const Seq2SeqModel& model,
                                                       std::vector<std::vector<int32_t>> src,
                                                       const CtcBeamOptions& options,
                                                       bool attention);
// One row's frames lp [T, C] (`upsample` per source unit) decoded as ctc_decode_batch decodes
// each row (a stream's utterance: decode/recognizer_stream.h).
std::vector<Hypothesis> ctc_decode_frames(const float* lp, int64_t T, int64_t C, int32_t blank,
                                          const CtcBeamOptions& options, bool attention,
                                          int64_t upsample = 1);
// The same for a batch as the model reads it (a recognizer's frames: models/seq2seq.h
// make_audio_batch); Hypothesis::path is per model frame (after its front end's subsampling).
std::vector<std::vector<Hypothesis>> ctc_decode_batch(const Seq2SeqModel& model,
                                                      const Seq2SeqBatch& batch,
                                                      const CtcBeamOptions& options,
                                                      bool attention);

// log p(tgt | src) of line-parallel pairs, with the rows above when `attention`; -inf when a
// target cannot be aligned to its source.
std::vector<Hypothesis> ctc_force_decode(const Seq2SeqModel& model,
                                         std::vector<std::vector<int32_t>> src,
                                         const std::vector<std::vector<int32_t>>& tgt,
                                         bool attention);

}  // namespace heed
