// SpecAugment (Park et al. 2019, "SpecAugment: A Simple Data Augmentation Method for Automatic
// Speech Recognition", section 2), on one utterance's filterbank frames [n, F] at training time:
//   frequency masking, m_F times: f ~ U[0, F_max], f0 ~ U[0, F - f); bins [f0, f0 + f) masked;
//   time masking, m_T times:      t ~ U[0, min(T_max, p n)], t0 ~ U[0, n - t); frames masked.
// Masked values become the bin's mean (`fill`), so that after the model's normalisation they are
// 0, as in the paper (which masks normalised features with zero). Time warping is left out (as
// ESPnet's and the PyTorch peer's LD policy without warping). The draws come from the caller's
// generator: a training step's own stream makes a resumed run mask as the uninterrupted one.
// Leaves out: speed perturbation and noise (they change the audio, before the features).
#pragma once

#include <cstdint>
#include <span>

#include "heed/kernels/random.h"

namespace heed {

struct SpecAugmentOptions {
  bool enabled = false;
  int64_t freq_width = 27;   // F_max (LD: 27)
  int64_t freq_masks = 2;    // m_F
  int64_t time_width = 100;  // T_max (LD: 100)
  double time_ratio = 0.2;   // p: a time mask covers at most this share of the frames
  int64_t time_masks = 2;    // m_T
};

void spec_augment(std::span<float> frames, int64_t bins, std::span<const float> fill,
                  const SpecAugmentOptions& options, Rng& rng);

}  // namespace heed
