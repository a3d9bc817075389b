// Waveform augmentation: speed perturbation makes a tone last 1/f as long at f times its
// frequency (counted by zero crossings); additive noise lands at the SNR asked for (measured
// from the added signal); nothing is changed when both are off; the same generator state
// augments alike, and the factors drawn cover the list.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <set>
#include <vector>

#include "heed/train/wave_augment.h"

namespace heed {
namespace {

constexpr int kRate = 16000;

std::vector<float> tone(double hz, double seconds) {
  std::vector<float> x(static_cast<size_t>(seconds * kRate));
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = 0.5f *
           static_cast<float>(std::sin(2 * std::numbers::pi * hz * static_cast<double>(i) / kRate));
  return x;
}

// Upward zero crossings a second, away from the resampler's edges.
double frequency(const std::vector<float>& x) {
  int crossings = 0;
  const size_t lo = x.size() / 10, hi = x.size() - x.size() / 10;
  for (size_t i = lo + 1; i < hi; ++i) crossings += x[i - 1] < 0 && x[i] >= 0;
  return crossings * static_cast<double>(kRate) / static_cast<double>(hi - lo);
}

TEST(WaveAugment, SpeedPerturbationScalesDurationAndPitch) {
  const std::vector<float> x = tone(440, 1.0);
  for (double f : {0.9, 1.1}) {
    const WaveAugmentOptions o{.speed_perturb = true, .speeds = {f}};
    Rng rng(1);
    double drawn = 0;
    const std::vector<float> y = wave_augment(x, o, rng, &drawn);
    EXPECT_EQ(drawn, f);
    EXPECT_NEAR(static_cast<double>(y.size()), kRate / f, 2.0) << f;
    EXPECT_NEAR(frequency(y), 440 * f, 440 * f * 0.01) << f;
  }
}

TEST(WaveAugment, NoiseLandsAtTheSnrAskedFor) {
  const std::vector<float> x = tone(300, 2.0);
  for (double snr : {5.0, 20.0}) {
    const WaveAugmentOptions o{.noise_prob = 1, .snr_lo = snr, .snr_hi = snr};
    Rng rng(7);
    const std::vector<float> y = wave_augment(x, o, rng);
    ASSERT_EQ(y.size(), x.size());
    double signal = 0, noise = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      signal += static_cast<double>(x[i]) * x[i];
      noise += static_cast<double>(y[i] - x[i]) * (y[i] - x[i]);
    }
    EXPECT_NEAR(10 * std::log10(signal / noise), snr, 0.2) << snr;
  }
}

TEST(WaveAugment, OffChangesNothingAndSeedsRepeat) {
  const std::vector<float> x = tone(200, 0.5);
  Rng rng(3);
  EXPECT_EQ(wave_augment(x, {}, rng), x);
  const WaveAugmentOptions o{.speed_perturb = true, .noise_prob = 0.5};
  std::set<double> factors;
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    Rng a(seed), b(seed);
    double fa = 0, fb = 0;
    EXPECT_EQ(wave_augment(x, o, a, &fa), wave_augment(x, o, b, &fb));
    EXPECT_EQ(fa, fb);
    factors.insert(fa);
  }
  EXPECT_EQ(factors, (std::set<double>{0.9, 1.0, 1.1}));
}

}  // namespace
}  // namespace heed
