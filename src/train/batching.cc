// Length-bucketed batches of one epoch (see the header).
#include "heed/train/batching.h"

#include <algorithm>
#include <numeric>

#include "heed/kernels/random.h"
#include "heed/util/error.h"

namespace heed {

std::vector<std::vector<size_t>> epoch_batches(std::span<const int64_t> src_len,
                                               std::span<const int64_t> cost, const BatchOptions& o,
                                               uint64_t seed, int64_t epoch) {
  check(o.sentences > 0, "batches: sentences per batch must be > 0, got ", o.sentences);
  check(o.tokens >= 0, "batches: tokens per batch must be >= 0, got ", o.tokens);
  check(src_len.size() == cost.size(), "batches: ", src_len.size(), " source lengths for ",
        cost.size(), " costs");
  Rng rng(seed * 1000003 + static_cast<uint64_t>(epoch));
  std::vector<size_t> idx(src_len.size());
  std::iota(idx.begin(), idx.end(), 0);
  for (size_t i = idx.size(); i > 1; --i)
    std::swap(idx[i - 1], idx[rng.below(static_cast<int64_t>(i))]);
  std::vector<std::vector<size_t>> out;
  const size_t window = static_cast<size_t>(o.sentences) * 50;
  for (size_t w = 0; w < idx.size(); w += window) {
    const size_t end = std::min(idx.size(), w + window);
    std::stable_sort(idx.begin() + static_cast<long>(w), idx.begin() + static_cast<long>(end),
                     [&](size_t a, size_t b) { return src_len[a] < src_len[b]; });
    std::vector<size_t> batch;
    int64_t longest = 0;
    for (size_t i = w; i < end; ++i) {
      const int64_t c = std::max<int64_t>(cost[idx[i]], longest);
      const bool full = o.tokens > 0 ? static_cast<int64_t>(batch.size() + 1) * c > o.tokens
                                     : static_cast<int64_t>(batch.size()) == o.sentences;
      if (full && !batch.empty()) {
        out.push_back(std::move(batch));
        batch.clear();
        longest = 0;
      }
      batch.push_back(idx[i]);
      longest = std::max(longest, cost[idx[i]]);
    }
    if (!batch.empty()) out.push_back(std::move(batch));
  }
  for (size_t i = out.size(); i > 1; --i)
    std::swap(out[i - 1], out[rng.below(static_cast<int64_t>(i))]);
  return out;
}

}  // namespace heed
