// Test support: the toy translation task of the model tests, random symbols reversed (or
// copied, for a monotonic task), with lengths drawn uniformly from [lo, hi].
#pragma once

#include <utility>
#include <vector>

#include "heed/data/vocab.h"
#include "heed/kernels/random.h"

namespace heed::testing {

// n pairs over symbols Vocab::kSpecials..V-1: source ids -> reversed (or copied) target ids.
inline std::pair<std::vector<std::vector<int32_t>>, std::vector<std::vector<int32_t>>> reversal(
    Rng& rng, int64_t n, int lo, int hi, int32_t V, bool copy = false) {
  std::vector<std::vector<int32_t>> src, tgt;
  for (int64_t i = 0; i < n; ++i) {
    int64_t len = lo + rng.below(hi - lo + 1);
    std::vector<int32_t> s;
    for (int64_t k = 0; k < len; ++k)
      s.push_back(static_cast<int32_t>(Vocab::kSpecials + rng.below(V - Vocab::kSpecials)));
    src.push_back(s);
    if (copy)
      tgt.push_back(s);
    else
      tgt.emplace_back(s.rbegin(), s.rend());
  }
  return {src, tgt};
}

}  // namespace heed::testing
