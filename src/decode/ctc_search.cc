// CTC decoding (see the header).
#include "heed/decode/ctc_search.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "heed/kernels/ctc.h"
#include "heed/util/error.h"

namespace heed {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

double log_add(double a, double b) {
  if (a < b) std::swap(a, b);
  if (b == kNegInf) return a;
  return a + std::log1p(std::exp(b - a));
}

// A prefix's paths so far: log p of those ending in a blank, and in its last label.
struct PrefixScore {
  double blank = kNegInf, label = kNegInf;
  double total() const { return log_add(blank, label); }
};

}  // namespace

std::vector<int32_t> ctc_best_path(const float* log_probs, int64_t T, int64_t C, int32_t blank) {
  std::vector<int32_t> labels;
  int32_t prev = blank;
  for (int64_t t = 0; t < T; ++t) {
    const float* row = log_probs + t * C;
    const auto best = static_cast<int32_t>(std::max_element(row, row + C) - row);
    if (best != blank && best != prev) labels.push_back(best);  // merge repeats, drop blanks
    prev = best;
  }
  return labels;
}

std::vector<CtcHypothesis> ctc_prefix_beam_search(const float* log_probs, int64_t T, int64_t C,
                                                  int32_t blank, const CtcBeamOptions& o) {
  check(o.beam >= 1 && o.n_best >= 1 && o.n_best <= o.beam,
        "CTC beam search: the n-best must be in 1..beam (", o.beam, "), got ", o.n_best);
  using Prefixes = std::map<std::vector<int32_t>, PrefixScore>;
  Prefixes beams{{{}, PrefixScore{.blank = 0.0}}};  // the empty prefix, probability 1
  // the K most probable of `all` (ties: the map's order, lexicographic in the ids)
  auto keep_best = [&](Prefixes& all) {
    std::vector<Prefixes::iterator> order;
    for (auto it = all.begin(); it != all.end(); ++it) order.push_back(it);
    std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
      return a->second.total() > b->second.total();
    });
    Prefixes kept;
    for (size_t k = 0; k < order.size() && k < static_cast<size_t>(o.beam); ++k)
      kept.insert(*order[k]);
    return kept;
  };
  for (int64_t t = 0; t < T; ++t) {
    const float* y = log_probs + t * C;  // [C]
    Prefixes next;
    for (const auto& [prefix, score] : beams) {
      const double total = score.total();
      // a blank: the same prefix, now ending in a blank
      PrefixScore& same = next[prefix];
      same.blank = log_add(same.blank, total + y[blank]);
      for (int32_t c = 0; c < C; ++c) {
        if (c == blank) continue;
        std::vector<int32_t> longer = prefix;
        longer.push_back(c);
        if (!prefix.empty() && c == prefix.back()) {
          // its last label again: merged into the same prefix, unless a blank came between
          same.label = log_add(same.label, score.label + y[c]);
          PrefixScore& ext = next[longer];
          ext.label = log_add(ext.label, score.blank + y[c]);
        } else {
          PrefixScore& ext = next[longer];
          ext.label = log_add(ext.label, total + y[c]);
        }
      }
    }
    beams = keep_best(next);
  }
  // The kept prefixes and the best path's labelling (which the pruning can lose: the search then
  // never answers worse than best path), ranked by their exact probabilities.
  beams.try_emplace(ctc_best_path(log_probs, T, C, blank));
  std::vector<CtcHypothesis> out;
  for (const auto& [prefix, score] : beams)
    out.push_back({prefix, ctc_log_prob(log_probs, T, C, blank, prefix)});
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.log_prob > b.log_prob; });
  out.resize(std::min(out.size(), static_cast<size_t>(o.n_best)));
  return out;
}

double ctc_log_prob(const float* log_probs, int64_t T, int64_t C, int32_t blank,
                    const std::vector<int32_t>& labels) {
  // the forward algorithm of the loss (kernels/ctc.h) on one sequence
  const auto t32 = static_cast<int32_t>(T), l32 = static_cast<int32_t>(labels.size());
  const kernels::CtcBatch p{.B = 1,
                            .T = T,
                            .C = C,
                            .L = l32,
                            .input_lengths = &t32,
                            .targets = labels.data(),
                            .target_lengths = &l32,
                            .blank = blank};
  std::vector<float> alpha(static_cast<size_t>(T * kernels::ctc_states(p)));
  float nll = 0;
  kernels::ctc_alpha(p, log_probs, alpha.data(), &nll);
  return -double{nll};
}

}  // namespace heed
