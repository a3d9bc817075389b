// Kaldi's log-mel filterbank (see the header).
#include "heed/data/fbank.h"

extern "C" {
#include <libavutil/mem.h>
#include <libavutil/tx.h>
}

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <initializer_list>
#include <memory>
#include <numbers>
#include <type_traits>

#include "heed/kernels/vmath.h"
#include "heed/util/error.h"

namespace heed {

std::span<const Named<FbankPrecision>> names(FbankPrecision) {
  static constexpr Named<FbankPrecision> kNames[] = {{FbankPrecision::float32, "float32"},
                                                     {FbankPrecision::float64, "float64"}};
  return kNames;
}

double mel_scale(double hz) {
  return 1127.0 * std::log1p(hz / 700.0);
}

namespace {

// The power spectrum |X_k|^2, k = 0..M, of n = 2M real samples x, through FFmpeg's complex FFT of
// M points (libavutil's av_tx; the float one runs x86 SIMD kernels chosen at run time) and the
// usual split of a real signal's transform into those of its even and odd samples:
//   z_m = x_2m + i x_2m+1,  Z = FFT_M(z)                       (Z_M = Z_0)
//   E_k = (Z_k + conj Z_M-k) / 2,  O_k = (Z_k - conj Z_M-k) / 2i   the even and odd samples' FFTs
//   X_k = E_k + W^k O_k,  W = exp(-2 pi i / n),  k = 0..M
// A context keeps scratch, so each thread makes its own, once per size and precision, and
// compute() stays thread-safe. Its buffers are av_malloc'ed: the SIMD kernels want them aligned.
template <typename Real>
class PowerSpectrum {
  static constexpr bool kFloat = std::is_same_v<Real, float>;

 public:
  explicit PowerSpectrum(int64_t n) : n_(n), m_(n / 2) {
    check(n >= 4 && n % 2 == 0, "fbank: an FFT of ", n, " points (4 or more, even)");
    Real scale = 1;
    const int r = av_tx_init(&ctx_, &fn_, kFloat ? AV_TX_FLOAT_FFT : AV_TX_DOUBLE_FFT, 0,
                             static_cast<int>(m_), &scale, 0);
    check(r == 0 && ctx_ != nullptr, "fbank: libavutil cannot make an FFT of ", m_, " points");
    in_ = static_cast<Real*>(av_mallocz(static_cast<size_t>(n) * sizeof(Real)));
    z_ = static_cast<Real*>(av_malloc(static_cast<size_t>(n + 2) * sizeof(Real)));
    check(in_ != nullptr && z_ != nullptr, "fbank: out of memory for an FFT of ", n, " points");
    for (auto* v : {&re_, &im_, &rre_, &rim_}) v->resize(static_cast<size_t>(m_ + 1));
    w_re_.resize(static_cast<size_t>(m_ + 1));
    w_im_.resize(static_cast<size_t>(m_ + 1));
    for (int64_t k = 0; k <= m_; ++k) {
      const double theta = 2 * std::numbers::pi * static_cast<double>(k) / static_cast<double>(n);
      w_re_[static_cast<size_t>(k)] = static_cast<Real>(std::cos(theta));
      w_im_[static_cast<size_t>(k)] = static_cast<Real>(-std::sin(theta));
    }
  }
  ~PowerSpectrum() {
    av_tx_uninit(&ctx_);
    av_free(in_);
    av_free(z_);
  }
  PowerSpectrum(const PowerSpectrum&) = delete;
  PowerSpectrum& operator=(const PowerSpectrum&) = delete;
  int64_t size() const { return n_; }
  Real* input() { return in_; }  // [n], the frame, zero-padded

  // the input's |X_k|^2 -> p [M + 1]
  void compute(Real* p) {
    fn_(ctx_, z_, in_, 2 * sizeof(Real));  // z_ [M] complex, (re, im) interleaved
    const int64_t M = m_;
    const Real* z = z_;
    Real *re = re_.data(), *im = im_.data(), *rre = rre_.data(), *rim = rim_.data();
#pragma omp simd
    for (int64_t k = 0; k < M; ++k) {  // Z_k as planes
      re[k] = z[2 * k];
      im[k] = z[2 * k + 1];
    }
    re[M] = re[0];
    im[M] = im[0];
#pragma omp simd
    for (int64_t k = 0; k <= M; ++k) {  // Z_M-k
      rre[k] = re[M - k];
      rim[k] = im[M - k];
    }
    const Real *wr = w_re_.data(), *wi = w_im_.data();
#pragma omp simd
    for (int64_t k = 0; k <= M; ++k) {
      const Real er = (re[k] + rre[k]) / 2, ei = (im[k] - rim[k]) / 2;    // E_k
      const Real o_r = (im[k] + rim[k]) / 2, o_i = (rre[k] - re[k]) / 2;  // O_k
      const Real xr = er + wr[k] * o_r - wi[k] * o_i;                     // X_k = E_k + W^k O_k
      const Real xi = ei + wr[k] * o_i + wi[k] * o_r;
      p[k] = xr * xr + xi * xi;
    }
  }

  // this thread's spectrum of n points
  static PowerSpectrum& of_size(int64_t n) {
    thread_local std::unique_ptr<PowerSpectrum> fft;
    if (fft == nullptr || fft->size() != n) fft = std::make_unique<PowerSpectrum>(n);
    return *fft;
  }

 private:
  int64_t n_, m_;
  AVTXContext* ctx_ = nullptr;
  av_tx_fn fn_ = nullptr;
  Real* in_ = nullptr;
  Real* z_ = nullptr;
  std::vector<Real> w_re_, w_im_;          // [M + 1] W^k
  std::vector<Real> re_, im_, rre_, rim_;  // [M + 1] Z_k and Z_M-k as planes (Z_M = Z_0)
};

float log_of(float x) {
  return vmath::log(x);
}
double log_of(double x) {
  return std::log(x);
}

}  // namespace

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
  window64_.resize(static_cast<size_t>(frame_length_));
  for (int64_t n = 0; n < frame_length_; ++n)
    window64_[static_cast<size_t>(n)] =
        std::pow(0.5 - 0.5 * std::cos(2 * std::numbers::pi * static_cast<double>(n) /
                                      static_cast<double>(frame_length_ - 1)),
                 0.85);
  window_.assign(window64_.begin(), window64_.end());
  // the filters: triangles equally spaced on the mel scale between low and high, over the FFT's
  // bins 0 .. fft_size/2 - 1 (the Nyquist bin gets no weight, as in Kaldi)
  const double nyquist = 0.5 * o.sample_rate;
  const double high = o.high_freq <= 0 ? nyquist + o.high_freq : o.high_freq;
  check(o.low_freq >= 0 && o.low_freq < high && high <= nyquist, "fbank: the band [", o.low_freq,
        ", ", high, "] Hz is not within [0, ", nyquist, "]");
  const double mel_low = mel_scale(o.low_freq), mel_high = mel_scale(high);
  const double delta = (mel_high - mel_low) / (bins_ + 1);
  const double bin_width = static_cast<double>(o.sample_rate) / static_cast<double>(fft_size_);
  // filter m's weights over bins 0 .. fft_size/2 - 1, laid out by blocks of kMelLanes filters:
  // block b holds, for each bin k in [begin_b, end_b), the weights of filters 16b .. 16b + 15
  // (zero outside a filter, and for the padding filters past bins_)
  const int64_t K = fft_size_ / 2;
  std::vector<float> h(static_cast<size_t>(bins_ * K), 0.f);  // [bins, K]
  for (int64_t m = 0; m < bins_; ++m) {
    const double left = mel_low + static_cast<double>(m) * delta, center = left + delta,
                 right = center + delta;
    for (int64_t k = 0; k < K; ++k) {
      const double mel = mel_scale(bin_width * static_cast<double>(k));
      h[static_cast<size_t>(m * K + k)] = static_cast<float>(std::max(
          0.0, std::min((mel - left) / (center - left), (right - mel) / (right - center))));
    }
  }
  for (int64_t m0 = 0; m0 < bins_; m0 += kMelLanes) {
    MelBlock b{.begin = K, .end = 0, .weights = {}};
    for (int64_t m = m0; m < std::min(bins_, m0 + kMelLanes); ++m)
      for (int64_t k = 0; k < K; ++k)
        if (h[static_cast<size_t>(m * K + k)] > 0) {
          b.begin = std::min(b.begin, k);
          b.end = std::max(b.end, k + 1);
        }
    b.end = std::max(b.end, b.begin);  // a block of empty filters: no bins
    b.weights.assign(static_cast<size_t>((b.end - b.begin) * kMelLanes), 0.f);
    for (int64_t k = b.begin; k < b.end; ++k)
      for (int64_t j = 0; j < kMelLanes && m0 + j < bins_; ++j)
        b.weights[static_cast<size_t>((k - b.begin) * kMelLanes + j)] =
            h[static_cast<size_t>((m0 + j) * K + k)];
    mel_.push_back(std::move(b));
  }
  // an FFT of this size can be made (else the error is here)
  if (o.precision == FbankPrecision::float64)
    PowerSpectrum<double>::of_size(fft_size_);
  else
    PowerSpectrum<float>::of_size(fft_size_);
}

int64_t Fbank::frames(int64_t n) const {
  return n < frame_length_ ? 0 : 1 + (n - frame_length_) / frame_shift_;
}

std::vector<float> Fbank::compute(std::span<const float> samples) const {
  const int64_t T = frames(static_cast<int64_t>(samples.size()));
  std::vector<float> out(static_cast<size_t>(T * bins_));  // [T, bins]
  if (options_.precision == FbankPrecision::float64)
    compute_frames<double>(samples, T, out.data());
  else
    compute_frames<float>(samples, T, out.data());
  return out;
}

template <typename Real>
void Fbank::compute_frames(std::span<const float> samples, int64_t T, float* out) const {
  const int64_t N = frame_length_;
  PowerSpectrum<Real>& fft = PowerSpectrum<Real>::of_size(fft_size_);
  std::vector<Real> power(static_cast<size_t>(fft_size_ / 2 + 1));
  const Real* window;
  if constexpr (std::is_same_v<Real, float>)
    window = window_.data();
  else
    window = window64_.data();
  const auto a = static_cast<Real>(options_.preemphasis);
  Real* f = fft.input();  // [fft_size]: the frame's N samples, then zeros
  std::fill(f + N, f + fft_size_, Real(0));
  for (int64_t t = 0; t < T; ++t) {
    const float* x = samples.data() + t * frame_shift_;
    // DC removal (d_n = x_n - mean), then pre-emphasis (d_n - a d_{n-1}, d_{-1} = d_0) and the
    // window in one pass: w_n (d_n - a d_{n-1}) = w_n (x_n - a x_{n-1}) - (1 - a) mean w_n
    Real mean = 0;
    if (options_.remove_dc_offset) {
      double sum = 0;
#pragma omp simd reduction(+ : sum)
      for (int64_t n = 0; n < N; ++n) sum += x[n];
      mean = static_cast<Real>(sum / static_cast<double>(N));
    }
    const Real shift = (1 - a) * mean;
    f[0] = window[0] * ((1 - a) * x[0] - shift);
#pragma omp simd
    for (int64_t n = 1; n < N; ++n)
      f[n] = window[n] * (static_cast<Real>(x[n]) - a * static_cast<Real>(x[n - 1]) - shift);
    Real* p = power.data();
    fft.compute(p);  // P_k = |FFT(frame)_k|^2, k = 0..fft_size/2
    // E_m = sum_k H_mk P_k, kMelLanes filters at a time: a bin's power times the block's row of
    // weights, four bins in flight
    float* row = out + t * bins_;
    for (size_t b = 0; b < mel_.size(); ++b) {
      const MelBlock& block = mel_[b];
      const float* w = block.weights.data();
      const Real* pk = p + block.begin;
      const int64_t n = block.end - block.begin;
      Real e0[kMelLanes] = {}, e1[kMelLanes] = {}, e2[kMelLanes] = {}, e3[kMelLanes] = {};
      int64_t k = 0;
      for (; k + 4 <= n; k += 4) {
        const float* wk = w + k * kMelLanes;
#pragma omp simd
        for (int64_t j = 0; j < kMelLanes; ++j) {
          e0[j] += wk[j] * pk[k];
          e1[j] += wk[kMelLanes + j] * pk[k + 1];
          e2[j] += wk[2 * kMelLanes + j] * pk[k + 2];
          e3[j] += wk[3 * kMelLanes + j] * pk[k + 3];
        }
      }
      for (; k < n; ++k) {
#pragma omp simd
        for (int64_t j = 0; j < kMelLanes; ++j) e0[j] += w[k * kMelLanes + j] * pk[k];
      }
      float e[kMelLanes];
#pragma omp simd
      for (int64_t j = 0; j < kMelLanes; ++j) {
        const Real v = (e0[j] + e1[j]) + (e2[j] + e3[j]);
        e[j] = static_cast<float>(log_of(v > Real(FLT_EPSILON) ? v : Real(FLT_EPSILON)));
      }
      const int64_t m0 = static_cast<int64_t>(b) * kMelLanes;
      std::copy_n(e, std::min(kMelLanes, bins_ - m0), row + m0);
    }
  }
}

}  // namespace heed
