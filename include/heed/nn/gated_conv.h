// A stack of residual blocks of dilated convolutions with WaveNet's gate (van den Oord et al.
// 2016, "WaveNet", section 2.3-2.4; the TCN of Bai et al. 2018; the blocks of Gehring et al.
// 2017's ConvS2S, whose GLU is the same gate with sigmoid alone), on h [B, T, C], per layer l:
//   [a ; b] = conv_l(dropout(h))                 [B, T, 2C]  kernel k, dilation d_l
//   z = tanh(a) (.) sigmoid(b)                   [B, T, C]   (ops: gated_tanh; or the GLU
//                                                            a (.) sigmoid(b), ConvS2S's)
//   z = W_l z + c_l                              [B, T, C]   with `projection` (a 1x1 conv)
//   h <- s (h + z)                               s = sqrt(1/2) (ConvS2S's scale) or 1
// Causal convolutions (output t sees inputs t - (k - 1) d .. t) or centred (k odd). Optionally
// every weight matrix weight-normalised, w = g v / ||v|| row by row (Salimans & Kingma 2016; as
// ConvS2S and the TCN train), with layer_<l>/conv/v and conv/g (proj/v, proj/g) for conv/W.
// Incremental generation (Paine et al. 2016, "Fast Wavenet Generation Algorithm"): a causal
// stack fed one position at a time keeps, per layer, a queue of its last (k - 1) d_l + 1
// inputs, so a step costs one [B, k C] x [k C, 2C] product per layer, not a recomputation of
// the prefix; `step` equals the last row of `forward` on the whole prefix (tests/nn). With the
// weights quantized for inference the steps' products run in int8 (kernels/quantize.h).
// Leaves out: embeddings and outputs (the models around it), skip connections to the output
// (WaveNet's sum of skips; the models here read the last layer).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "heed/autograd/graph.h"
#include "heed/kernels/elementwise.h"
#include "heed/kernels/quantize.h"
#include "heed/nn/init.h"

namespace heed {

struct GatedConvConfig {
  int64_t channels = 256;                         // C
  int64_t kernel = 3;                             // k
  std::vector<int64_t> dilations = {1, 2, 4, 8};  // d_l, one per layer
  bool causal = true;
  bool projection = false;     // a 1x1 convolution after the gate
  bool weight_norm = false;    // w = g v / ||v|| per output row (Salimans & Kingma 2016)
  float residual_scale = 1.f;  // s
  float dropout = 0.f;         // on each layer's input (training)
  kernels::Gate gate = kernels::Gate::Tanh;  // WaveNet's tanh gate, or the GLU (ConvS2S)

  int64_t receptive_field() const;  // 1 + sum_l (k - 1) d_l
};

class GatedConvStack {
 public:
  // Parameters under scope: layer_<l>/conv/W [2C, k C], layer_<l>/conv/b [2C], with
  // `projection` also layer_<l>/proj/W [C, C], layer_<l>/proj/b [C].
  GatedConvStack(const GatedConvConfig& config, const Scope& scope);
  const GatedConvConfig& config() const { return c_; }
  int64_t layers() const { return static_cast<int64_t>(conv_W_.size()); }

  // h [B, T, C] -> [B, T, C]; lengths [B] (empty: every position is real). Layer `l` alone:
  // layer_forward, for models that put something between the layers; its two halves
  // layer_gate (z, before the residual) and residual (s (h + z)) for models that change z
  // first (ConvS2S's decoder adds its attention to z).
  Var forward(Graph& g, Var h, std::span<const int32_t> lengths = {}) const;
  Var layer_forward(Graph& g, int64_t l, Var h, std::span<const int32_t> lengths = {}) const;
  Var layer_gate(Graph& g, int64_t l, Var h, std::span<const int32_t> lengths = {}) const;
  Var residual(Var h, Var z) const;

  // Incremental generation (causal stacks, inference): the queues of B sequences.
  struct Cache {
    int64_t B = 0, t = 0;                  // sequences; positions consumed
    std::vector<std::vector<float>> past;  // per layer [span_l, B, C], position p at p % span_l
    std::vector<float> cols, ab, z;        // scratch [B, k C], [B, 2C], [B, C]
    std::vector<int8_t> q;                 // int8 decoding: the quantized rows,
    std::vector<float> scale;              //   their scales,
    std::vector<int32_t> acc;              //   and the int32 sums
    // weight norm: each layer's w = g v / ||v|| (conv, then projection), once per generation
    std::vector<std::vector<float>> weights;
    std::vector<kernels::Int8Matrix> int8;  //   and their int8 copies (int8 decoding)
  };
  Cache start(int64_t B) const;
  // One position for every sequence: x [B, C] -> y [B, C] through every layer (y may be x).
  void step(Cache& cache, const float* x, float* y) const;
  // Layer l alone: in [B, C] -> out [B, C]; call every layer in order, then advance(cache).
  void layer_step(Cache& cache, int64_t l, const float* in, float* out) const;
  // Its gate alone: in [B, C] -> z [B, C] (in the cache's scratch, valid until its next use);
  // then residual_step(in, z, out) = s (in + z), out may be in.
  const float* layer_gate_step(Cache& cache, int64_t l, const float* in) const;
  void residual_step(const Cache& cache, const float* in, const float* z, float* out) const;
  void advance(Cache& cache) const { ++cache.t; }
  // Beam search: sequence r continues the queues of sequence from[r].
  void reorder(Cache& cache, std::span<const int32_t> from) const;
  // y [B, N] = x [B, K] W^T + bias, through W's int8 copy when the store was quantized for
  // inference (ParameterStore::quantize_for_inference), fp32 otherwise
  struct Affine {
    const float* W;                // [N, K]
    const kernels::Int8Matrix* q;  // its int8 copy, or null
    const float* bias;             // [N]
    int64_t N, K;
  };
  static Affine affine_of(const Parameter& W, const Parameter& bias);
  static void affine(Cache& cache, const Affine& a, const float* x, float* y);

 private:
  // W, or with weight norm v and its gains g (pushed onto `gains`)
  Parameter* weight(const Scope& layer, const std::string& name, const Shape& shape,
                    std::vector<Parameter*>& gains) const;
  // the weight as used: W, or g v / ||v|| [O, K]
  static Var weight_var(Graph& g, Parameter& W, Parameter* gain);
  static void effective_weight(const Parameter& W, const Parameter* gain, float* w);
  Affine step_affine(const Cache& cache, int64_t l, bool proj) const;

  GatedConvConfig c_;
  std::vector<Parameter*> conv_W_, conv_b_;  // per layer [2C, k C] (weight norm: v), [2C]
  std::vector<Parameter*> proj_W_, proj_b_;  // per layer [C, C], [C] (projection only)
  std::vector<Parameter*> conv_g_, proj_g_;  // weight norm: the gains g [2C], [C]
};

}  // namespace heed
