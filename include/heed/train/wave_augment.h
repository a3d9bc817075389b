// Augmentation of a training utterance's waveform, before its features (Ko et al. 2015, "Audio
// Augmentation for Speech Recognition"; Kaldi's and ESPnet's recipes):
//   speed perturbation: a factor f drawn from `speeds` (0.9, 1.0, 1.1); the waveform resampled
//     from 16 kHz to 16 / f kHz and read at 16 kHz again, so that it lasts 1 / f as long, its
//     pitch and formants shifted by f (sox's `speed`);
//   additive noise: with probability p, white Gaussian noise at an SNR drawn uniformly from
//     [snr_lo, snr_hi] dB:  n ~ N(0, sigma^2),  sigma^2 = mean(x^2) / 10^(SNR / 10).
// The draws come from the caller's generator (a training step's stream: a resumed run augments
// as the uninterrupted one did).
// Leaves out: the features (data/fbank.h) and SpecAugment (train/spec_augment.h), which masks
// them after.
#pragma once

#include <vector>

#include "heed/kernels/random.h"

namespace heed {

struct WaveAugmentOptions {
  bool speed_perturb = false;
  std::vector<double> speeds = {0.9, 1.0, 1.1};  // the factors drawn from, uniformly
  double noise_prob = 0;                         // p
  double snr_lo = 10, snr_hi = 30;               // dB
  bool enabled() const { return speed_perturb || noise_prob > 0; }
};

// x: 16 kHz samples (full scale 1) -> the augmented samples; `factor` gets the speed drawn.
std::vector<float> wave_augment(const std::vector<float>& x, const WaveAugmentOptions& options,
                                Rng& rng, double* factor = nullptr);

}  // namespace heed
