// SpecAugment's masks (see the header).
#include "heed/train/spec_augment.h"

#include <algorithm>

#include "heed/util/error.h"

namespace heed {

void spec_augment(std::span<float> frames, int64_t bins, std::span<const float> fill,
                  const SpecAugmentOptions& o, Rng& rng) {
  check(bins > 0 && static_cast<int64_t>(frames.size()) % bins == 0 &&
            static_cast<int64_t>(fill.size()) == bins,
        "spec_augment: ", frames.size(), " values, ", fill.size(), " fills for ", bins, " bins");
  const int64_t n = static_cast<int64_t>(frames.size()) / bins;
  for (int64_t k = 0; k < o.freq_masks; ++k) {
    const int64_t f = rng.below(std::min(o.freq_width, bins) + 1);
    const int64_t f0 = rng.below(bins - f + 1);
    for (int64_t t = 0; t < n; ++t)
      for (int64_t j = f0; j < f0 + f; ++j) frames[t * bins + j] = fill[j];
  }
  const auto longest =
      std::min<int64_t>(o.time_width, static_cast<int64_t>(o.time_ratio * static_cast<double>(n)));
  for (int64_t k = 0; k < o.time_masks; ++k) {
    const int64_t w = rng.below(std::max<int64_t>(longest, 0) + 1);
    const int64_t t0 = rng.below(n - w + 1);
    for (int64_t t = t0; t < t0 + w; ++t)
      std::copy(fill.begin(), fill.end(), frames.begin() + t * bins);
  }
}

}  // namespace heed
