// Residual gated dilated convolutions, whole sequences and one position at a time (see the
// header).
#include "heed/nn/gated_conv.h"

#include <algorithm>
#include <string>

#include "heed/autograd/ops.h"
#include "heed/autograd/ops/conv1d.h"
#include "heed/kernels/elementwise.h"
#include "heed/kernels/gemm.h"
#include "heed/kernels/quantize.h"
#include "heed/util/error.h"

namespace heed {

int64_t GatedConvConfig::receptive_field() const {
  std::vector<Conv1dOptions> layers;
  for (int64_t d : dilations) layers.push_back({.kernel = kernel, .dilation = d});
  return heed::receptive_field(layers);
}

GatedConvStack::GatedConvStack(const GatedConvConfig& c, const Scope& scope) : c_(c) {
  check(c.kernel >= 1 && !c.dilations.empty(), "gated convolutions: kernel ", c.kernel, " and ",
        c.dilations.size(), " layers");
  check(c.causal || c.kernel % 2 == 1, "gated convolutions: a centred convolution needs an odd ",
        "kernel, got ", c.kernel);
  const int64_t C = c.channels;
  for (size_t l = 0; l < c.dilations.size(); ++l) {
    check(c.dilations[l] >= 1, "gated convolutions: dilation ", c.dilations[l], " of layer ", l);
    const Scope layer = scope / ("layer_" + std::to_string(l));
    conv_W_.push_back(&layer.param("conv/W", {2 * C, c.kernel * C}, Init::glorot_uniform()));
    conv_b_.push_back(&layer.param("conv/b", {2 * C}, Init::zeros()));
    if (c.projection) {
      proj_W_.push_back(&layer.param("proj/W", {C, C}, Init::glorot_uniform()));
      proj_b_.push_back(&layer.param("proj/b", {C}, Init::zeros()));
    }
  }
}

Var GatedConvStack::layer_forward(Graph& g, int64_t l, Var h,
                                  std::span<const int32_t> lengths) const {
  const auto i = static_cast<size_t>(l);
  // [a ; b] = conv_l(dropout(h))  [B, T, 2C]
  Var ab = conv1d(
      dropout(h, c_.dropout), g.param(*conv_W_[i]), g.param(*conv_b_[i]),
      {.kernel = c_.kernel, .dilation = c_.dilations[i], .causal = c_.causal, .lengths = lengths});
  Var z = gated_tanh(ab);  // tanh(a) (.) sigmoid(b)  [B, T, C]
  if (c_.projection) z = linear(z, g.param(*proj_W_[i]), g.param(*proj_b_[i]));
  // h <- s (h + z)
  return c_.residual_scale == 1.f ? h + z : (h + z) * c_.residual_scale;
}

Var GatedConvStack::forward(Graph& g, Var h, std::span<const int32_t> lengths) const {
  for (int64_t l = 0; l < layers(); ++l) h = layer_forward(g, l, h, lengths);
  return h;
}

GatedConvStack::Cache GatedConvStack::start(int64_t B) const {
  check(c_.causal, "gated convolutions: incremental generation needs causal convolutions");
  const int64_t C = c_.channels;
  Cache cache;
  cache.B = B;
  for (int64_t d : c_.dilations)
    cache.past.emplace_back(static_cast<size_t>(((c_.kernel - 1) * d + 1) * B * C), 0.f);
  cache.cols.resize(static_cast<size_t>(B * c_.kernel * C));
  cache.ab.resize(static_cast<size_t>(B * 2 * C));
  cache.z.resize(static_cast<size_t>(B * C));
  return cache;
}

void GatedConvStack::affine(Cache& cache, const Parameter& W, const Parameter& bias, const float* x,
                            float* y) {
  const int64_t B = cache.B, N = W.value.shape()[0], K = W.value.shape()[1];
  if (W.int8) {  // int8 decoding: x quantized per row, oneDNN's s8s8s32 product
    cache.q.resize(static_cast<size_t>(B * K));
    cache.scale.resize(static_cast<size_t>(B));
    cache.acc.resize(static_cast<size_t>(B * N));
    kernels::quantize_rows(x, B, K, cache.q.data(), cache.scale.data());
    kernels::gemm_int8(B, cache.q.data(), cache.scale.data(), *W.int8, bias.value.data(),
                       cache.acc.data(), y);
    return;
  }
  for (int64_t b = 0; b < B; ++b) std::copy_n(bias.value.data(), N, y + b * N);
  kernels::gemm(false, true, B, N, K, 1.f, x, K, W.value.data(), K, 1.f, y, N);
}

void GatedConvStack::layer_step(Cache& cache, int64_t l, const float* in, float* out) const {
  const auto i = static_cast<size_t>(l);
  const int64_t B = cache.B, C = c_.channels, k = c_.kernel, d = c_.dilations[i];
  const int64_t span = (k - 1) * d + 1, t = cache.t;
  std::vector<float>& past = cache.past[i];  // [span, B, C]
  std::copy_n(in, B * C, past.data() + (t % span) * B * C);
  // the columns [B, k C]: tap j reads position t + (j - (k - 1)) d, zero before the start
  for (int64_t j = 0; j < k; ++j) {
    const int64_t p = t + (j - (k - 1)) * d;
    for (int64_t b = 0; b < B; ++b) {
      float* dst = cache.cols.data() + (b * k + j) * C;
      if (p < 0)
        std::fill_n(dst, C, 0.f);
      else
        std::copy_n(past.data() + ((p % span) * B + b) * C, C, dst);
    }
  }
  // [a ; b] = cols W^T + bias  [B, 2C]
  affine(cache, *conv_W_[i], *conv_b_[i], cache.cols.data(), cache.ab.data());
  kernels::gated_tanh_forward(cache.ab.data(), cache.z.data(), B, C);
  const float* z = cache.z.data();
  if (c_.projection) {  // z <- z W_p^T + c  (into ab's first half-width, free now)
    affine(cache, *proj_W_[i], *proj_b_[i], z, cache.ab.data());
    z = cache.ab.data();
  }
  // h <- s (h + z)
  for (int64_t n = 0; n < B * C; ++n) out[n] = c_.residual_scale * (in[n] + z[n]);
}

void GatedConvStack::step(Cache& cache, const float* x, float* y) const {
  if (y != x) std::copy_n(x, cache.B * c_.channels, y);
  for (int64_t l = 0; l < layers(); ++l) layer_step(cache, l, y, y);
  advance(cache);
}

}  // namespace heed
