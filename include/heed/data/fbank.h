// Log-mel filterbank features exactly as Kaldi's compute-fbank-feats and
// torchaudio.compliance.kaldi.fbank compute them with their defaults (dither off). For frame t
// of N = 25 ms (400 samples at 16 kHz), shifted by 10 ms, only whole frames (snip_edges):
//   x_n <- x_n - mean(x)                                   DC offset removed
//   x_n <- x_n - 0.97 x_{n-1}  (x_{-1} = x_0)              pre-emphasis
//   x_n <- x_n w_n,  w_n = (0.5 - 0.5 cos(2 pi n / (N - 1)))^0.85     Povey's window
//   P_k = |FFT_512(x)_k|^2, k = 0..256                      power spectrum, zero-padded to 512
//   E_m = sum_k H_mk P_k,  m = 0..79                        triangular filters, equally spaced on
//                                                           mel(f) = 1127 ln(1 + f / 700) from
//                                                           20 Hz to Nyquist (the top bin's weight
//                                                           0)
//   fbank_tm = ln max(E_m, eps)                             eps = FLT_EPSILON
// The samples on Kaldi's scale: 16-bit values (full scale 32768), as it reads WAV files; heed's
// audio reader gives [-1, 1), so callers multiply by 32768 (heed features does).
// The FFT is FFmpeg's (libavutil's av_tx real transform, Debian's libavutil).
// Leaves out: reading audio (io/audio.h), normalisation and augmentation.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "heed/util/names.h"

namespace heed {

// The arithmetic of the window, FFT, power and filters: float32 as Kaldi and torchaudio's default
// (~5e-6 from float64 on average, up to ~2e-3 in bins 60-80 dB under their frame's peak), or
// float64 (within ~2e-4 of torchaudio's float64; the FFT ~3x slower).
enum class FbankPrecision { float32, float64 };
std::span<const Named<FbankPrecision>> names(FbankPrecision);  // "float32" | "float64"

struct FbankOptions {
  int sample_rate = 16000;
  double frame_length_ms = 25, frame_shift_ms = 10;
  int num_mel_bins = 80;
  double low_freq = 20;  // Hz
  double high_freq = 0;  // Hz; <= 0: Nyquist plus this
  double preemphasis = 0.97;
  bool remove_dc_offset = true;
  FbankPrecision precision = FbankPrecision::float32;
};

// The filterbank of one configuration: its window, filters and FFT made once; compute() per
// signal. Thread-safe (compute keeps its buffers per call, its FFT per thread).
class Fbank {
 public:
  explicit Fbank(const FbankOptions& options = {});
  Fbank(const Fbank&) = delete;
  Fbank& operator=(const Fbank&) = delete;
  int64_t frame_length() const { return frame_length_; }  // N, samples
  int64_t frame_shift() const { return frame_shift_; }
  int64_t bins() const { return bins_; }
  // Whole frames in n samples: 1 + (n - N) / shift, 0 when n < N.
  int64_t frames(int64_t n) const;
  // samples on Kaldi's scale -> [frames, bins] row-major
  std::vector<float> compute(std::span<const float> samples) const;

 private:
  int64_t frame_length_, frame_shift_, fft_size_, bins_;
  FbankOptions options_;
  // [T, bins] features of the T frames of samples into out, in Real arithmetic
  template <typename Real>
  void compute_frames(std::span<const float> samples, int64_t T, float* out) const;

  std::vector<double> window64_;  // [N] Povey's
  std::vector<float> window_;     // [N] the same in float
  // the filters, kMelLanes at a time: block b's bins [begin, end) and its weights
  // [end - begin, kMelLanes] (filters 16b .. 16b + 15 at each bin; zero outside a filter)
  static constexpr int64_t kMelLanes = 16;
  struct MelBlock {
    int64_t begin, end;
    std::vector<float> weights;
  };
  std::vector<MelBlock> mel_;
};

// Kaldi's mel scale: 1127 ln(1 + f / 700).
double mel_scale(double hz);

}  // namespace heed
