// SpecAugment's masks: every masked value is the fill of its bin, the masked bins form at most
// m_F bands of at most F_max bins (whole columns) and the masked frames at most m_T runs of at
// most min(T_max, p n) frames (whole rows); the same generator state masks the same way, and
// over many draws both kinds of mask occur.
#include <gtest/gtest.h>

#include <vector>

#include "heed/train/spec_augment.h"

namespace heed {
namespace {

TEST(SpecAugment, MasksWithinItsBounds) {
  const int64_t n = 60, F = 20;
  const SpecAugmentOptions o{.enabled = true,
                             .freq_width = 5,
                             .freq_masks = 2,
                             .time_width = 8,
                             .time_ratio = 0.1,
                             .time_masks = 2};
  std::vector<float> fill(F);
  for (int64_t f = 0; f < F; ++f) fill[static_cast<size_t>(f)] = -100.f - static_cast<float>(f);
  int with_freq = 0, with_time = 0;
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    std::vector<float> x(static_cast<size_t>(n * F));
    for (size_t k = 0; k < x.size(); ++k) x[k] = static_cast<float>(k);
    Rng rng(seed);
    spec_augment(x, F, fill, o, rng);
    auto masked = [&](int64_t t, int64_t f) {
      return x[static_cast<size_t>(t * F + f)] == fill[static_cast<size_t>(f)];
    };
    // columns entirely masked, rows entirely masked; every masked value in one of them
    std::vector<bool> col(F, true), row(n, true);
    for (int64_t t = 0; t < n; ++t)
      for (int64_t f = 0; f < F; ++f) {
        col[static_cast<size_t>(f)] = col[static_cast<size_t>(f)] && masked(t, f);
        row[static_cast<size_t>(t)] = row[static_cast<size_t>(t)] && masked(t, f);
      }
    int64_t cols = 0, rows = 0;
    for (bool c : col) cols += c;
    for (bool r : row) rows += r;
    for (int64_t t = 0; t < n; ++t)
      for (int64_t f = 0; f < F; ++f)
        if (masked(t, f)) {
          ASSERT_TRUE(col[static_cast<size_t>(f)] || row[static_cast<size_t>(t)]) << seed;
        } else {
          ASSERT_EQ(x[static_cast<size_t>(t * F + f)], static_cast<float>(t * F + f));
        }
    if (rows == n) continue;  // (cannot happen: at most 2 x 6 frames)
    EXPECT_LE(cols, 2 * 5) << seed;
    EXPECT_LE(rows, 2 * 6) << seed;  // min(8, 0.1 x 60) = 6 per mask
    with_freq += cols > 0;
    with_time += rows > 0;
    // the same state masks the same way
    std::vector<float> y(static_cast<size_t>(n * F));
    for (size_t k = 0; k < y.size(); ++k) y[k] = static_cast<float>(k);
    Rng again(seed);
    spec_augment(y, F, fill, o, again);
    ASSERT_EQ(x, y);
  }
  EXPECT_GT(with_freq, 150);
  EXPECT_GT(with_time, 150);
}

}  // namespace
}  // namespace heed
