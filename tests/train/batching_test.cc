// Length-bucketed batches: every example once, sizes by sentences or by tokens, sorted windows
// (little padding), and the same batches for the same (seed, epoch).
#include "heed/train/batching.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "heed/kernels/random.h"
#include "heed/util/error.h"

namespace heed {
namespace {

struct Lengths {
  std::vector<int64_t> src, cost;
};
Lengths random_lengths(size_t n, uint64_t seed) {
  Rng rng(seed);
  Lengths l;
  for (size_t i = 0; i < n; ++i) {
    l.src.push_back(1 + rng.below(40));
    l.cost.push_back(std::max<int64_t>(l.src.back(), 1 + rng.below(45)) + 1);
  }
  return l;
}

void expect_each_example_once(const std::vector<std::vector<size_t>>& batches, size_t n) {
  std::vector<int> seen(n, 0);
  for (const auto& b : batches) {
    EXPECT_FALSE(b.empty());
    for (size_t i : b) ++seen.at(i);
  }
  EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](int c) { return c == 1; }));
}

TEST(Batching, BySentences) {
  Lengths l = random_lengths(1000, 1);
  auto batches = epoch_batches(l.src, l.cost, {.sentences = 32}, 7, 0);
  expect_each_example_once(batches, 1000);
  size_t partial = 0;
  double padding = 0, real = 0;
  for (const auto& b : batches) {
    EXPECT_LE(b.size(), 32u);
    partial += b.size() < 32;
    int64_t longest = 0;
    for (size_t i : b) longest = std::max(longest, l.src[i]);
    for (size_t i : b) {
      padding += static_cast<double>(longest - l.src[i]);
      real += static_cast<double>(l.src[i]);
    }
  }
  EXPECT_LE(partial, 1u);           // one sorting window of 1000 < 50 x 32: one short batch at most
  EXPECT_LT(padding / real, 0.05);  // sorted: almost no source padding
}

TEST(Batching, ByTokensRespectsTheBudget) {
  Lengths l = random_lengths(3000, 2);
  l.cost[17] = 900;  // longer than the budget: a batch of its own
  const int64_t budget = 800;
  auto batches = epoch_batches(l.src, l.cost, {.sentences = 64, .tokens = budget}, 7, 3);
  expect_each_example_once(batches, 3000);
  for (const auto& b : batches) {
    int64_t longest = 0;
    for (size_t i : b) longest = std::max(longest, l.cost[i]);
    if (b.size() > 1) {
      EXPECT_LE(static_cast<int64_t>(b.size()) * longest, budget);
    }
    if (std::find(b.begin(), b.end(), size_t{17}) != b.end()) {
      EXPECT_EQ(b.size(), 1u);
    }
  }
  // short sentences make bigger batches than long ones
  auto size_of_len = [&](bool shortest) {
    size_t best = shortest ? 0 : SIZE_MAX;
    for (const auto& b : batches)
      best = shortest ? std::max(best, b.size()) : std::min(best, b.size());
    return best;
  };
  EXPECT_GT(size_of_len(true), 4 * size_of_len(false));
}

TEST(Batching, APureFunctionOfSeedAndEpoch) {
  Lengths l = random_lengths(500, 3);
  auto a = epoch_batches(l.src, l.cost, {.sentences = 16}, 5, 2);
  EXPECT_EQ(a, epoch_batches(l.src, l.cost, {.sentences = 16}, 5, 2));
  EXPECT_NE(a, epoch_batches(l.src, l.cost, {.sentences = 16}, 5, 3));
  EXPECT_THROW(epoch_batches(l.src, l.cost, {.sentences = 0}, 5, 2), Error);
  EXPECT_THROW(epoch_batches(l.src, std::span<const int64_t>(l.cost).first(3), {}, 5, 2), Error);
}

}  // namespace
}  // namespace heed
