// Test support: CTC by its definition, for checking the loss and the searches on small cases:
// a labelling's probability is the sum, over every one of the C^T frame-level paths that
// collapses to it (repeats merged, then blanks dropped), of the product of the frames' softmax
// probabilities. Blank is class 0.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <vector>

namespace heed::testing {

// logits [T, C] -> every labelling that some path gives, with its probability.
inline std::map<std::vector<int32_t>, double> ctc_labellings(const float* logits, int64_t T,
                                                             int64_t C) {
  std::vector<std::vector<double>> y(T, std::vector<double>(C));
  for (int64_t t = 0; t < T; ++t) {
    double z = 0;
    for (int64_t c = 0; c < C; ++c) z += std::exp(double{logits[t * C + c]});
    for (int64_t c = 0; c < C; ++c) y[t][c] = std::exp(double{logits[t * C + c]}) / z;
  }
  std::map<std::vector<int32_t>, double> p;
  std::vector<int32_t> path(T, 0);
  for (int64_t n = 0, paths = static_cast<int64_t>(std::pow(C, T)); n < paths; ++n) {
    int64_t k = n;
    for (int64_t t = 0; t < T; ++t, k /= C) path[t] = static_cast<int32_t>(k % C);
    std::vector<int32_t> collapsed;
    for (int64_t t = 0; t < T; ++t)
      if (path[t] != 0 && (t == 0 || path[t] != path[t - 1])) collapsed.push_back(path[t]);
    double q = 1;
    for (int64_t t = 0; t < T; ++t) q *= y[t][path[t]];
    p[collapsed] += q;
  }
  return p;
}

// -log p(labels | logits [T, C]) (+inf when no path gives them).
inline double ctc_brute_force_nll(const float* logits, int64_t T, int64_t C,
                                  const std::vector<int32_t>& labels) {
  const auto all = ctc_labellings(logits, T, C);
  const auto it = all.find(labels);
  return it == all.end() ? std::numeric_limits<double>::infinity() : -std::log(it->second);
}

}  // namespace heed::testing
