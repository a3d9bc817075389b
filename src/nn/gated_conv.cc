// Residual gated dilated convolutions, whole sequences and one position at a time (see the
// header).
#include "heed/nn/gated_conv.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "heed/autograd/ops.h"
#include "heed/autograd/ops/conv1d.h"
#include "heed/kernels/elementwise.h"
#include "heed/kernels/gemm.h"
#include "heed/kernels/quantize.h"
#include "heed/util/error.h"

namespace heed {

namespace {

// ||v|| of one row of K, summed in double
float row_norm(const float* v, int64_t K) {
  double ss = 0;
  for (int64_t k = 0; k < K; ++k) ss += static_cast<double>(v[k]) * v[k];
  return static_cast<float>(std::sqrt(ss));
}

}  // namespace

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
    conv_W_.push_back(weight(layer, "conv", {2 * C, c.kernel * C}, conv_g_));
    conv_b_.push_back(&layer.param("conv/b", {2 * C}, Init::zeros()));
    if (c.projection) {
      proj_W_.push_back(weight(layer, "proj", {C, C}, proj_g_));
      proj_b_.push_back(&layer.param("proj/b", {C}, Init::zeros()));
    }
  }
}

Parameter* GatedConvStack::weight(const Scope& layer, const std::string& name, const Shape& shape,
                                  std::vector<Parameter*>& gains) const {
  if (!c_.weight_norm) return &layer.param(name + "/W", shape, Init::glorot_uniform());
  // w = g v / ||v||: v as W would be, g its rows' norms, so that w starts as v
  Parameter& v = layer.param(name + "/v", shape, Init::glorot_uniform());
  Parameter& g = layer.param(name + "/g", {shape[0]}, Init::zeros());
  const int64_t K = shape[1];
  for (int64_t o = 0; o < shape[0]; ++o) g.value.data()[o] = row_norm(v.value.data() + o * K, K);
  gains.push_back(&g);
  return &v;
}

Var GatedConvStack::weight_var(Graph& g, Parameter& W, Parameter* gain) {
  Var v = g.param(W);  // [O, K]
  if (!gain) return v;
  // w = g v / ||v||, row by row (Salimans & Kingma 2016, eq. 2)  [O, K]
  const int64_t O = W.value.shape()[0];
  Var norm = sqrt(sum(v * v, 1, /*keepdim=*/true));          // [O, 1]
  return v * (reshape(g.param(*gain), Shape{O, 1}) / norm);  // [O, K]
}

void GatedConvStack::effective_weight(const Parameter& W, const Parameter* gain, float* w) {
  const int64_t O = W.value.shape()[0], K = W.value.shape()[1];
  const float* v = W.value.data();
  for (int64_t o = 0; o < O; ++o) {
    const float scale = gain ? gain->value.data()[o] / row_norm(v + o * K, K) : 1.f;
    for (int64_t k = 0; k < K; ++k) w[o * K + k] = scale * v[o * K + k];
  }
}

Var GatedConvStack::layer_gate(Graph& g, int64_t l, Var h, std::span<const int32_t> lengths) const {
  const auto i = static_cast<size_t>(l);
  // [a ; b] = conv_l(dropout(h))  [B, T, 2C]
  Var ab = conv1d(
      dropout(h, c_.dropout), weight_var(g, *conv_W_[i], c_.weight_norm ? conv_g_[i] : nullptr),
      g.param(*conv_b_[i]),
      {.kernel = c_.kernel, .dilation = c_.dilations[i], .causal = c_.causal, .lengths = lengths});
  Var z = gated(ab, c_.gate);  // tanh(a) (.) sigmoid(b), or a (.) sigmoid(b)  [B, T, C]
  if (c_.projection)
    z = linear(z, weight_var(g, *proj_W_[i], c_.weight_norm ? proj_g_[i] : nullptr),
               g.param(*proj_b_[i]));
  return z;
}

Var GatedConvStack::residual(Var h, Var z) const {
  // h <- s (h + z)
  return c_.residual_scale == 1.f ? h + z : (h + z) * c_.residual_scale;
}

Var GatedConvStack::layer_forward(Graph& g, int64_t l, Var h,
                                  std::span<const int32_t> lengths) const {
  return residual(h, layer_gate(g, l, h, lengths));
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
  if (c_.weight_norm) {  // w = g v / ||v|| once for the whole generation (int8 if v has a copy)
    const bool int8 = conv_W_.front()->int8 != nullptr;
    for (int64_t l = 0; l < layers(); ++l) {
      const auto i = static_cast<size_t>(l);
      std::vector<std::pair<const Parameter*, const Parameter*>> mats = {{conv_W_[i], conv_g_[i]}};
      if (c_.projection) mats.emplace_back(proj_W_[i], proj_g_[i]);
      for (const auto& [v, g] : mats) {
        std::vector<float> w(static_cast<size_t>(v->value.numel()));
        effective_weight(*v, g, w.data());
        if (int8)
          cache.int8.push_back(
              kernels::quantize_matrix(w.data(), v->value.shape()[0], v->value.shape()[1]));
        cache.weights.push_back(std::move(w));
      }
    }
  }
  return cache;
}

GatedConvStack::Affine GatedConvStack::affine_of(const Parameter& W, const Parameter& bias) {
  return {.W = W.value.data(),
          .q = W.int8.get(),
          .bias = bias.value.data(),
          .N = W.value.shape()[0],
          .K = W.value.shape()[1]};
}

void GatedConvStack::affine(Cache& cache, const Affine& a, const float* x, float* y) {
  const int64_t B = cache.B;
  if (a.q) {  // int8 decoding: x quantized per row, oneDNN's s8s8s32 product
    cache.q.resize(static_cast<size_t>(B * a.K));
    cache.scale.resize(static_cast<size_t>(B));
    cache.acc.resize(static_cast<size_t>(B * a.N));
    kernels::quantize_rows(x, B, a.K, cache.q.data(), cache.scale.data());
    kernels::gemm_int8(B, cache.q.data(), cache.scale.data(), *a.q, a.bias, cache.acc.data(), y);
    return;
  }
  for (int64_t b = 0; b < B; ++b) std::copy_n(a.bias, a.N, y + b * a.N);
  kernels::gemm(false, true, B, a.N, a.K, 1.f, x, a.K, a.W, a.K, 1.f, y, a.N);
}

GatedConvStack::Affine GatedConvStack::step_affine(const Cache& cache, int64_t l, bool proj) const {
  const auto i = static_cast<size_t>(l);
  const Parameter& W = proj ? *proj_W_[i] : *conv_W_[i];
  const Parameter& b = proj ? *proj_b_[i] : *conv_b_[i];
  if (!c_.weight_norm) return affine_of(W, b);
  const size_t m = c_.projection ? 2 * i + (proj ? 1 : 0) : i;  // the materialised matrix
  return {.W = cache.weights[m].data(),
          .q = cache.int8.empty() ? nullptr : &cache.int8[m],
          .bias = b.value.data(),
          .N = W.value.shape()[0],
          .K = W.value.shape()[1]};
}

const float* GatedConvStack::layer_gate_step(Cache& cache, int64_t l, const float* in) const {
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
  affine(cache, step_affine(cache, l, false), cache.cols.data(), cache.ab.data());
  kernels::gate_forward(c_.gate, cache.ab.data(), cache.z.data(), B, C);
  if (!c_.projection) return cache.z.data();
  // z <- z W_p^T + c  (into ab's first half-width, free now)
  affine(cache, step_affine(cache, l, true), cache.z.data(), cache.ab.data());
  return cache.ab.data();
}

void GatedConvStack::residual_step(const Cache& cache, const float* in, const float* z,
                                   float* out) const {
  // h <- s (h + z)
  for (int64_t n = 0; n < cache.B * c_.channels; ++n) out[n] = c_.residual_scale * (in[n] + z[n]);
}

void GatedConvStack::layer_step(Cache& cache, int64_t l, const float* in, float* out) const {
  residual_step(cache, in, layer_gate_step(cache, l, in), out);
}

void GatedConvStack::reorder(Cache& cache, std::span<const int32_t> from) const {
  const int64_t B = cache.B, C = c_.channels;
  check(static_cast<int64_t>(from.size()) == B, "gated convolutions: reorder of ", from.size(),
        " rows for ", B);
  std::vector<float> moved;
  for (std::vector<float>& past : cache.past) {  // [span, B, C]
    moved.resize(past.size());
    const int64_t span = static_cast<int64_t>(past.size()) / (B * C);
    for (int64_t p = 0; p < span; ++p)
      for (int64_t r = 0; r < B; ++r)
        std::copy_n(past.data() + (p * B + from[static_cast<size_t>(r)]) * C, C,
                    moved.data() + (p * B + r) * C);
    past.swap(moved);
  }
}

void GatedConvStack::step(Cache& cache, const float* x, float* y) const {
  if (y != x) std::copy_n(x, cache.B * c_.channels, y);
  for (int64_t l = 0; l < layers(); ++l) layer_step(cache, l, y, y);
  advance(cache);
}

}  // namespace heed
