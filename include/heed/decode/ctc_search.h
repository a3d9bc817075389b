// Decoding a CTC model's per-frame class log-probabilities [T, C] into labels (Graves et al.
// 2006, §3.2): a labelling is the collapse of a frame-level path (repeats merged, blanks
// dropped), and its probability the sum over all paths that collapse to it.
// - Best path: the most probable class of every frame, collapsed. The labelling of the most
//   probable path, which need not be the most probable labelling.
// - Prefix beam search (Graves & Jaitly 2014; Hannun et al. 2014): after each frame the K most
//   probable prefixes, each with the probability of its paths that end in a blank and of those
//   that end in its last label, so that the paths of one labelling are summed, not competing.
// Leaves out: a language model in the search (to come with `heed lm`), batching (rows are
// independent: callers loop).
#pragma once

#include <cstdint>
#include <vector>

namespace heed {

// log_probs [T, C]; the labels of the best path.
std::vector<int32_t> ctc_best_path(const float* log_probs, int64_t T, int64_t C, int32_t blank);

struct CtcBeamOptions {
  int beam = 5;    // K prefixes kept after every frame
  int n_best = 1;  // labellings returned, most probable first (<= beam)
};

struct CtcHypothesis {
  std::vector<int32_t> labels;
  double log_prob = 0;  // log p(labels | x): over all the paths that collapse to them
};

// log_probs [T, C] -> up to n_best labellings, most probable first (ties: in the ids'
// lexicographic order), each with its exact log-probability: the K prefixes kept after the last
// frame and the best path's labelling are rescored by the forward algorithm, so the answer is
// never less probable than best path's.
std::vector<CtcHypothesis> ctc_prefix_beam_search(const float* log_probs, int64_t T, int64_t C,
                                                  int32_t blank, const CtcBeamOptions& options);

// log p(labels | x) of log_probs [T, C], exactly (the CTC forward algorithm); -inf when no path
// gives them.
double ctc_log_prob(const float* log_probs, int64_t T, int64_t C, int32_t blank,
                    const std::vector<int32_t>& labels);

}  // namespace heed
