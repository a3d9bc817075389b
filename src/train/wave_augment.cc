// Speed perturbation and additive noise (see the header).
#include "heed/train/wave_augment.h"

#include <algorithm>
#include <cmath>

#include "heed/io/audio.h"
#include "heed/util/error.h"

namespace heed {

std::vector<float> wave_augment(const std::vector<float>& x, const WaveAugmentOptions& o, Rng& rng,
                                double* factor) {
  constexpr int kRate = 16000;
  double f = 1.0;
  if (o.speed_perturb && !o.speeds.empty())
    f = o.speeds[static_cast<size_t>(rng.below(static_cast<int64_t>(o.speeds.size())))];
  check(f > 0, "speed perturbation: a factor of ", f);
  if (factor != nullptr) *factor = f;
  // 16 kHz -> 16 / f kHz, read back at 16 kHz: 1 / f as long
  std::vector<float> y = f == 1.0 ? x
                                  : resample(x, kRate, static_cast<int>(std::lround(kRate / f)),
                                             "speed perturbation", ResampleQuality::fastest);
  if (o.noise_prob > 0 && rng.uniform() < o.noise_prob) {
    const double snr = rng.uniform(static_cast<float>(o.snr_lo), static_cast<float>(o.snr_hi));
    double power = 0;
    for (float v : y) power += static_cast<double>(v) * v;
    power /= static_cast<double>(std::max<size_t>(y.size(), 1));
    const auto sigma = static_cast<float>(std::sqrt(power / std::pow(10.0, snr / 10.0)));
    for (float& v : y) v += sigma * rng.normal();
  }
  return y;
}

}  // namespace heed
