// Kaldi's log-mel filterbank (see the header).
#include "heed/data/fbank.h"

#include <kiss_fftr.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <numbers>

#include "heed/kernels/vmath.h"
#include "heed/util/error.h"

namespace heed {

double mel_scale(double hz) {
  return 1127.0 * std::log1p(hz / 700.0);
}

// kissfft's real FFT of the padded frame: its configuration is read-only once made, so one
// serves every thread.
struct Fbank::Fft {
  kiss_fftr_cfg cfg = nullptr;
  explicit Fft(int64_t n) : cfg(kiss_fftr_alloc(static_cast<int>(n), 0, nullptr, nullptr)) {
    check(cfg != nullptr, "fbank: kissfft cannot make an FFT of ", n, " points");
  }
  ~Fft() { kiss_fftr_free(cfg); }
  Fft(const Fft&) = delete;
  Fft& operator=(const Fft&) = delete;
};

Fbank::Fbank(const FbankOptions& o) : options_(o) {
  check(o.sample_rate > 0 && o.num_mel_bins > 0 && o.frame_length_ms > 0 && o.frame_shift_ms > 0,
        "fbank: the rate, bins, frame length and shift must be positive");
  frame_length_ = static_cast<int64_t>(o.sample_rate * o.frame_length_ms / 1000.0);
  frame_shift_ = static_cast<int64_t>(o.sample_rate * o.frame_shift_ms / 1000.0);
  check(frame_length_ >= 2 && frame_shift_ >= 1, "fbank: a frame of ", frame_length_,
        " samples shifted by ", frame_shift_);
  fft_size_ = 1;
  while (fft_size_ < frame_length_) fft_size_ *= 2;  // Kaldi's round_to_power_of_two
  bins_ = o.num_mel_bins;
  // Povey's window: the Hann window (not periodic) to the power 0.85
  window_.resize(static_cast<size_t>(frame_length_));
  for (int64_t n = 0; n < frame_length_; ++n)
    window_[static_cast<size_t>(n)] = static_cast<float>(
        std::pow(0.5 - 0.5 * std::cos(2 * std::numbers::pi * static_cast<double>(n) /
                                      static_cast<double>(frame_length_ - 1)),
                 0.85));
  // the filters: triangles equally spaced on the mel scale between low and high, over the FFT's
  // bins 0 .. fft_size/2 - 1 (the Nyquist bin gets no weight, as in Kaldi)
  const double nyquist = 0.5 * o.sample_rate;
  const double high = o.high_freq <= 0 ? nyquist + o.high_freq : o.high_freq;
  check(o.low_freq >= 0 && o.low_freq < high && high <= nyquist, "fbank: the band [", o.low_freq,
        ", ", high, "] Hz is not within [0, ", nyquist, "]");
  const double mel_low = mel_scale(o.low_freq), mel_high = mel_scale(high);
  const double delta = (mel_high - mel_low) / (bins_ + 1);
  const double bin_width = static_cast<double>(o.sample_rate) / static_cast<double>(fft_size_);
  first_.assign(static_cast<size_t>(bins_), 0);
  weights_.assign(static_cast<size_t>(bins_), {});
  for (int64_t m = 0; m < bins_; ++m) {
    const double left = mel_low + static_cast<double>(m) * delta, center = left + delta,
                 right = center + delta;
    auto& w = weights_[static_cast<size_t>(m)];
    for (int64_t k = 0; k < fft_size_ / 2; ++k) {
      const double mel = mel_scale(bin_width * static_cast<double>(k));
      const double weight =
          std::max(0.0, std::min((mel - left) / (center - left), (right - mel) / (right - center)));
      if (weight > 0) {
        if (w.empty()) first_[static_cast<size_t>(m)] = k;
        w.resize(static_cast<size_t>(k - first_[static_cast<size_t>(m)] + 1), 0.f);
        w.back() = static_cast<float>(weight);
      }
    }
  }
  fft_ = std::make_unique<Fft>(fft_size_);
}

Fbank::~Fbank() = default;

int64_t Fbank::frames(int64_t n) const {
  return n < frame_length_ ? 0 : 1 + (n - frame_length_) / frame_shift_;
}

std::vector<float> Fbank::compute(std::span<const float> samples) const {
  const int64_t T = frames(static_cast<int64_t>(samples.size())), N = frame_length_;
  std::vector<float> out(static_cast<size_t>(T * bins_));  // [T, bins]
  std::vector<float> frame(static_cast<size_t>(fft_size_));
  std::vector<kiss_fft_cpx> spectrum(static_cast<size_t>(fft_size_ / 2 + 1));
  std::vector<float> power(static_cast<size_t>(fft_size_ / 2 + 1));
  const float* window = window_.data();
  const float a = static_cast<float>(options_.preemphasis);
  float* f = frame.data();
  std::vector<float> centred(static_cast<size_t>(N));
  float* d = centred.data();
  for (int64_t t = 0; t < T; ++t) {
    const float* x = samples.data() + t * frame_shift_;
    // DC removal (d_n = x_n - mean), then pre-emphasis (d_n - a d_{n-1}, d_{-1} = d_0) and the
    // window in one pass
    float mean = 0;
    if (options_.remove_dc_offset) {
      double sum = 0;
#pragma omp simd reduction(+ : sum)
      for (int64_t n = 0; n < N; ++n) sum += x[n];
      mean = static_cast<float>(sum / static_cast<double>(N));
    }
#pragma omp simd
    for (int64_t n = 0; n < N; ++n) d[n] = x[n] - mean;
    f[0] = window[0] * (d[0] - a * d[0]);
#pragma omp simd
    for (int64_t n = 1; n < N; ++n) f[n] = window[n] * (d[n] - a * d[n - 1]);
    kiss_fftr(fft_->cfg, f, spectrum.data());
    const auto K = static_cast<int64_t>(power.size());
    const kiss_fft_cpx* c = spectrum.data();
    float* p = power.data();
#pragma omp simd
    for (int64_t k = 0; k < K; ++k) p[k] = c[k].r * c[k].r + c[k].i * c[k].i;
    float* row = out.data() + t * bins_;
    for (int64_t m = 0; m < bins_; ++m) {
      const auto& w = weights_[static_cast<size_t>(m)];
      const float* pm = p + first_[static_cast<size_t>(m)];
      const auto L = static_cast<int64_t>(w.size());
      const float* wm = w.data();
      float e = 0;
#pragma omp simd reduction(+ : e)
      for (int64_t k = 0; k < L; ++k) e += wm[k] * pm[k];
      row[m] = e > FLT_EPSILON ? e : FLT_EPSILON;
    }
#pragma omp simd
    for (int64_t m = 0; m < bins_; ++m) row[m] = vmath::log(row[m]);
  }
  return out;
}

}  // namespace heed
