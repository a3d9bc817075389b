// The attention family of the RNN encoder-decoder, one mechanism per file in this folder:
//   none        c_i = h_S for every i (Cho et al. 2014: the fixed-length bottleneck)
//   bahdanau    e_ij = v^T tanh(W s_{i-1} + U h_j + b)                 (Bahdanau et al. 2015)
//   luong-dot   score(h_t, h_s) = h_t^T h_s                            (Luong et al. 2015)
//   luong-general  score = h_t^T W_a h_s
//   luong-concat   score = v_a^T tanh(W_a [h_t ; h_s])
//   local-m / local-p  a window [p_t - D, p_t + D] around an aligned position, scores of the
//               general form times exp(-(s - p_t)^2 / 2 sigma^2), sigma = D / 2
//   monotonic   stop at h_j with p_ij = sigmoid(g v^T/||v|| tanh(W s_{i-1} + U h_j + b) + r),
//               scanning forward only: expected alignment in training, hard and linear-time
//               in decoding                                       (Raffel et al. 2017)
//   mocha       monotonic, then soft attention over the w entries ending at the stop
//                                                                 (Chiu & Raffel 2018)
//   location    e_ij = w^T tanh(W s_{i-1} + V h_j + U f_ij + b), f_i = F * alpha_{i-1}: the
//               previous alignment's convolutional features inside the energy (Chorowski et
//               al. 2015, eqs. 8-9), with sharpening, smoothing and windowing
//   sigmoid     alpha_j = sigmoid(h_t^T W_a h_j), each position attended independently
//   structured  alpha_j = p(z_j = 1), z a linear-chain CRF over attend / do not attend with
//               those unary potentials and learned pairwise ones (Kim et al. 2017)
//   hard        one position j per step, scored by any of the global mechanisms: sampled
//               (REINFORCE, Xu et al. 2015), straight-through Gumbel-softmax, or marginalised
//               exactly by the decoder (Wu, Shapiro & Cotterell 2018); argmax in decoding
// Every mechanism masks source padding out of its softmax and returns the context vector and
// the alignment weights (for --attention-out and the heatmaps). A mechanism holds only its
// parameters and is const; what a decoder keeps between steps is its AttentionState.
// Leaves out: the decoder that uses them (models/rnn_seq2seq) and multi-head attention
// (the Transformer's, with its fused kernel).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include <nlohmann/json.hpp>

#include "heed/autograd/graph.h"
#include "heed/nn/init.h"
#include "heed/util/names.h"

namespace heed {

enum class AttentionKind {
  None,
  Bahdanau,
  LuongDot,
  LuongGeneral,
  LuongConcat,
  LocalM,
  LocalP,
  Monotonic,
  Mocha,
  Hard,
  Location,
  Sigmoid,
  Structured
};
std::span<const Named<AttentionKind>> names(AttentionKind);  // "none", "bahdanau", "luong-dot", ...
AttentionKind parse_attention(const std::string& name);      // an Error lists the names
std::string attention_name(AttentionKind kind);

// How hard attention is trained (its decoding takes the argmax, or samples).
enum class HardTraining {
  Reinforce,  // sample j ~ alpha_i; the score function's gradient by REINFORCE (Xu et al. 2015)
  Gumbel,     // straight-through Gumbel-softmax, the temperature annealed (Jang et al. 2017)
  Exact,      // p(y_i) = sum_j alpha_ij p(y_i | h_j), the decoder fed y_{i-1} only (Wu et al. 2018)
};
std::span<const Named<HardTraining>> names(HardTraining);  // "reinforce", "gumbel", "exact"

// REINFORCE's baseline: one moving average of the log-likelihood per token (Xu et al. 2015),
// one per target word, or each token's own log-likelihood under the expected context
// sum_j alpha_ij h_j in place of the sampled h_j (a soft-attention baseline, as Deng et al. 2018
// use for hard attention): it depends on the decoder's state, not on the sample.
enum class HardBaseline { Global, Word, Expected };
std::span<const Named<HardBaseline>> names(HardBaseline);  // "global", "word", "expected"

// Each mechanism's own options, with their keys in a model's config.json (written by the
// mechanism's file: local.cc, monotonic.cc, hard.cc; reading lets nlohmann-json's exceptions
// through). Local attention (local-m, local-p): "window", which every RNN model writes.
struct LocalAttentionConfig {
  int64_t window = 10;  // D: the half-width
  void to_json(nlohmann::json& j) const;
  static LocalAttentionConfig from_json(const nlohmann::json& j);
};
// Monotonic attention and MoChA: "chunk", "monotonic_noise", "monotonic_bias".
struct MonotonicAttentionConfig {
  int64_t chunk = 4;  // w: MoChA's chunk
  float noise = 1.f;  // sigma: pre-sigmoid noise in training
  float bias = -4.f;  // r's initial value
  void to_json(nlohmann::json& j) const;
  static MonotonicAttentionConfig from_json(const nlohmann::json& j);
};

// Hard attention: "hard_score", "hard_train", "hard_mix", ... ("hard_baseline", "hard_discount"
// and "hard_marginal" only when not their defaults, as older models lack them).
struct HardAttentionConfig {
  AttentionKind score = AttentionKind::Bahdanau;  // the score function: bahdanau or luong-*
  HardTraining training = HardTraining::Exact;
  float mix = 0.5f;     // reinforce: the probability of the expected context instead
  float entropy = 0.f;  // reinforce: lambda of the entropy bonus -lambda H(alpha_i)
  HardBaseline baseline = HardBaseline::Global;  // reinforce: its baseline
  float discount = 1.f;   // reinforce: gamma of the return (1: the reward to go)
  float tau = 1.f;        // gumbel: the first temperature,
  float tau_min = 0.5f;   //   annealed as max(tau_min, tau exp(-anneal step))
  float anneal = 1e-4f;   //   (Jang et al. 2017, section 3)
  bool sample = false;    // decoding samples j ~ alpha_i instead of taking the argmax
  bool marginal = false;  // decoding, exact-trained: p(y_i) = sum_j alpha_ij p(y_i | h_j), the
                          // distribution trained on, instead of the argmax j's p(y_i | h_j)
  void to_json(nlohmann::json& j) const;
  static HardAttentionConfig from_json(const nlohmann::json& j);
};

// Location-aware attention: "location_filters", "location_width", "location_sharpen",
// "location_smooth", "location_window" (written by every model with location attention).
struct LocationAttentionConfig {
  int64_t filters = 10;  // K convolution filters of alpha_{i-1} (Chorowski et al.: 10)
  int64_t width = 31;    // r, odd (Chorowski et al.: 201 at 100 frames/s; the peer: 31)
  float sharpen = 1.f;   // beta >= 1: alpha = softmax(beta e)
  bool smooth = false;   // alpha = sigmoid(e) / sum sigmoid(e) instead of the softmax
  int64_t window = 0;    // > 0: attend within this many frames of alpha_{i-1}'s median
  void to_json(nlohmann::json& j) const;
  static LocationAttentionConfig from_json(const nlohmann::json& j);
};

// Which decoder a mechanism goes with: Bahdanau's (attend from s_{i-1}, the context into the
// recurrence) or Luong's (attend from h_t, input feeding of h~_t). Every kind names its own.
enum class DecoderStyle { Bahdanau, Luong };
DecoderStyle decoder_style(AttentionKind kind);

struct AttentionConfig {
  AttentionKind kind = AttentionKind::Bahdanau;
  int64_t query_dim = 0;   // Dq: decoder state size (s_{i-1} for Bahdanau, h_t for Luong)
  int64_t memory_dim = 0;  // Dm: annotation size (2H for a bidirectional encoder)
  int64_t attn_dim = 0;    // A: hidden size of the additive (bahdanau, concat) scorers
  LocalAttentionConfig local{};
  MonotonicAttentionConfig monotonic{};
  HardAttentionConfig hard{};
  LocationAttentionConfig location{};
};

struct Attended {
  Var context;    // c [B, Dm] = sum_j alpha_j h_j (hard attention: h_j; exact training: none)
  Var weights;    // alpha [B, S], zero on padding (and outside the local window); hard
                  // attention: one-hot rows (exact training: alpha)
  Var alignment;  // what the next step reads as alpha_{i-1} when it is not `weights` (MoChA:
                  // the monotonic alignment under its chunks); empty otherwise
  // hard attention
  std::span<const int32_t> chosen{};  // [B] the position each row attends to (decoding)
  Var log_weights{};                  // exact training: log alpha [B, S], -inf on padding
  Var log_prob{};  // reinforce training: log alpha_ij of the sampled j [B] (0 for a row that took
                   // the expected context)
  Var entropy{};   // reinforce training: H(alpha_i) [B]
  Var expected{};  // reinforce training with the expected baseline: sum_j alpha_ij h_j [B, Dm]
};

// The source side of one batch, given to start().
struct Memory {
  Var annotations;                   // h [B, S, Dm]
  Tensor mask;                       // [B, S]: 0 for real tokens, -inf for padding
  std::span<const int32_t> lengths;  // [B] source lengths
};

// What one decoder keeps of its attention between steps. A mechanism's parameters are const
// and shared by every decoder of a model; each decoder owns one of these (made by start(),
// advanced by attend()), so that decoders run side by side and losses are computed by
// several threads with one model. The memory and `keys` are made once per batch, before the
// decoder's Graph::mark(), and survive every rewind; what a step makes (`previous`) is
// carried over the rewind (carried()) and follows the beams (reorder()). Rows of one source
// have the same memory, so a reorder within a source leaves the memory alone.
struct AttentionState {
  Memory memory;
  Var keys;            // start()'s projection of the memory, per mechanism: U h_j + b [B, S, A]
                       // (bahdanau), W_a h_s [B, S, Dq] (luong-general, local-*), W_s h_s
                       // [B, S, A] (luong-concat), h_s (luong-dot), the context h_{S_b}
                       // [B, Dm] (none), U h_j + b [B, S, A] (monotonic, mocha), V h_j + b
                       // [B, S, A] (location)
  Var chunk_keys;      // U' h_j + b' [B, S, A] (mocha's chunk energies)
  Var previous;        // alpha_{i-1} [B, S]: the weights of the last step (none before the first;
                       // monotonic decoding: one-hot at the last stop, all 0 once run off the end)
  int64_t step = 0;    // i: the target position of the next attend() (local-m aligns p_i = i)
  int64_t wait_k = 0;  // k > 0: step i attends to source positions j < i + k only (wait-k,
                       // Ma et al. 2019: prefix-to-prefix in training and decoding alike)
  int64_t wait_chunk = 1;     // wait-k's source token, in positions: j < (i + k) chunk (audio)
  int64_t train_step = 0;     // the training step (the Gumbel temperature's schedule)
  bool distribution = false;  // hard attention's decoding reports alpha_i, not the one-hot row

  // What a step makes and the next one reads: the Vars to carry over Graph::rewind.
  std::array<Var*, 1> carried() { return {&previous}; }
  // Beam search: row r continues row from[r] (rows of one source only).
  void reorder(std::span<const int32_t> from);
};

class Attention {
 public:
  virtual ~Attention() = default;
  // Once per batch: a decoder's state over `memory`, with what does not depend on the query
  // precomputed (U h_j + b for Bahdanau, W_a h_s for luong-general).
  virtual AttentionState start(Graph& g, const Memory& memory) const = 0;
  // One decoder step: query [B, Dq] -> the context and the weights; advances `state` (the
  // weights become state.previous, the step its successor).
  Attended attend(Graph& g, Var query, AttentionState& state) const {
    Attended a = state.wait_k > 0 ? compute_wait_k(g, query, state) : compute(g, query, state);
    state.previous = a.alignment.valid() ? a.alignment : a.weights;
    ++state.step;
    return a;
  }
  // The energies e_ij [B, S] of a mechanism whose weights are softmax(e) over the mask
  // (bahdanau, luong-*: what hard attention scores with); an Error for the others.
  virtual Var energies(Graph& g, Var query, AttentionState& state) const;

 protected:
  // The mechanism's equations for one step; it may read (and keep in `state`) what it needs of
  // earlier steps.
  virtual Attended compute(Graph& g, Var query, AttentionState& state) const = 0;

 private:
  // compute() with the source positions j >= i + k masked out, as if not read yet
  Attended compute_wait_k(Graph& g, Var query, AttentionState& state) const;
};

std::unique_ptr<Attention> make_attention(const AttentionConfig& config, const Scope& scope);

// The [B, S] additive padding mask (0 / -inf) of a batch of source lengths.
Tensor padding_mask(std::span<const int32_t> lengths, int64_t S, Graph& g);
// Whether a mechanism can attend to a source prefix (wait-k): the global ones whose weights
// are a softmax over the memory's mask (bahdanau, luong-*).
bool supports_wait_k(AttentionKind kind);
// Whether a mechanism scores by energies() (a softmax over the memory): hard attention's scorers.
bool has_energies(AttentionKind kind);
// context [B, Dm] = alpha [B, S] applied to memory [B, S, Dm] (autograd/ops/context.h).
Var weighted_sum(Var alpha, Var memory);
// The bilinear scores h_t^T k_s [B, S] of a query h_t [B, D] against keys k [B, S, D] (Luong's
// dot and general scores, W_a h_s their keys; local and structured attention's too).
Var bilinear_scores(Var keys, Var h_t);

}  // namespace heed
