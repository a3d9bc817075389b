// Monotonic multihead attention (Ma, Pino, Cross, Puzon & Gu 2020, "Monotonic Multihead
// Attention", ICLR): every head of a Transformer decoder layer's cross-attention is a monotonic
// attention head (Raffel et al. 2017) scored as the Transformer scores,
//   e^h_ij = q^h_i k^h_j^T / sqrt(d_k) + r_h,    q^h_i = (x_i W^Q)^h,  k^h_j = (m_j W^K)^h
//   p^h_ij = sigmoid(e^h_ij + eps),  eps ~ N(0, sigma^2) in training only
// Training takes the expected alignment of every head and step (kernels/monotonic.h),
//   alpha^h_i = p^h_i (.) cumprod_excl(1 - p^h_i)
//               (.) cumsum(alpha^h_{i-1} / cumprod_excl(1 - p^h_i))
//   head_h = sum_j alpha^h_ij v^h_j                                          (MMA-H)
// or, with a chunk w, MoChA in every head (Chiu & Raffel 2018): soft attention over the w
// entries ending at the stop, with energies of their own projections,
//   u^h_ij = q'^h_i k'^h_j^T / sqrt(d_k),  head_h = sum_j beta^h_ij v^h_j   (eq. 20 of MoChA)
// and w at least the source's length is MMA's infinite lookback (MMA-IL).
//   MultiHead_i = Concat(head_1, ..., head_h) W^O
// Decoding is hard, head by head (Raffel et al., Algorithm 1): from where head h stopped at
// step i - 1, the first j with p^h_ij >= 0.5 (e >= 0); the head attends to v^h_j (or softly to
// its chunk); a head that runs off the end of the memory attends to nothing from then on. A step
// needs the source up to the furthest stop of all heads of all layers: online decoding reads
// while any head runs off the prefix read (MonotonicHeadsState::ran_off()).
// Training against latency (Ma et al. 2020, section 2.3): every head's expected delay, given
// to the terms of nn/latency_loss.h.
// HeadDrop (Inaguma, Mimura & Kawahara 2020, "Enhancing Monotonic Multihead Attention for
// Streaming ASR"): in training each head of each sentence is masked out with
// probability p_HD and the kept ones are scaled by h / (number kept),
//   head_h <- m_bh head_h h / sum_h' m_bh',   m_bh ~ Bernoulli(1 - p_HD)
// so that no head can be left to the others: the decoder cannot rest on the one head that reads
// while the rest stop on the first word, which the latency terms above favour. The same paper
// prunes the heads of the lower decoder layers, which stop on the first word whatever is done
// (MonotonicHeadsConfig::layers; those layers then read the target alone).
// One policy for the decoder (MonotonicHeadsConfig::shared): instead of a stop per head, the
// lowest attending layer has one stopping head over the whole model width, MILk's (Arivazhagan
// et al. 2019, "Monotonic Infinite Lookback Attention for Simultaneous Machine Translation")
// policy in a Transformer,
//   e_ij = q_i k_j^T / sqrt(d) + r,   alpha_i as above,
// and every head of every attending layer attends softly over the chunk ending at that one
// stop, with its own energies u^h_ij (MoChA's expected beta, MILk's with w >= |x|):
//   head_h = sum_j beta^h_ij v^h_j,   beta^h_i = chunk(alpha_i, u^h_i)
// so that, as in wait-k, every head sees the whole prefix read; the read is adaptive. A layer
// above the lowest (follows()) has no stopping energies of its own: it takes the policy's
// alignment in training and its stop in decoding.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "heed/autograd/ops/packing.h"
#include "heed/nn/init.h"
#include "heed/nn/latency_loss.h"
#include "heed/util/names.h"

namespace heed {

struct MonotonicHeadsConfig {
  int64_t chunk = 0;      // 0: each head attends to its stop alone; w >= 1: MoChA's w entries
  float bias = -4.f;      // r_h's initial value (negative: early alignments move on, Raffel §2.5)
  float noise = 1.f;      // sigma of the pre-sigmoid noise in training
  float head_drop = 0.f;  // p_HD: HeadDrop's probability of masking a head out in training
  // Decoder layers with monotonic heads, the top ones (0: every layer); the layers below have no
  // cross-attention (Inaguma et al. 2020 prune the lower layers' heads, which learn no alignment)
  int64_t layers = 0;
  bool shared = false;    // one stopping policy for the decoder (above), not a stop per head
  LatencyLoss latency{};  // training against the heads' delays (nn/latency_loss.h)
};

// What decoding keeps of one layer's heads between steps.
struct MonotonicHeadsState {
  int64_t heads = 0;
  std::vector<int32_t> stop;  // [B, h]: where each head stopped last (0 before the first step;
                              // -1: it ran off the end and attends to nothing since)
  // Some head of some row is off the end.
  bool ran_off() const;
  // Beam search: row r continues row from[r] (fewer rows than before: the batch shrinks).
  void reorder(std::span<const int32_t> from);
};

class MonotonicMultiHeadAttention {
 public:
  // follows: with c.shared, a layer above the one that holds the policy (it takes its stops)
  MonotonicMultiHeadAttention(int64_t d_model, int64_t heads, const MonotonicHeadsConfig& c,
                              const Scope& scope, bool follows = false);
  // The memory's projections, once per batch: packed [N_s, d] -> [B, S, 2d] (K | V), or
  // [B, S, 3d] (K | V | K', MoChA's chunk keys); a layer that follows: [B, S, 2d] (V | K').
  Var project_memory(Var memory, const Packing& src) const;
  // Stopping heads: h, 1 for the shared policy, 0 for a layer that follows it.
  int64_t stopping_heads() const { return stopping_heads_; }
  bool follows() const { return stopping_heads_ == 0; }
  // Teacher forcing: x [N_q, d] packed as q, every step's expected attention at once -> [N_q, d].
  // key_lengths: the source lengths. `delays`, when given, gets every head's expected delay at
  // every step, in source tokens read before writing, [B, h, T] (0 on padding steps):
  //   E[d^h_i] = sum_j (j + 1) alpha^h_ij + |x| (1 - sum_j alpha^h_ij)
  // (a head that runs off the end has read the whole source): monotonic_latency_loss's input.
  // With the shared policy, `policy` carries its expected alignment [B, T, S] from the layer
  // that holds it (written there, [B, 1, T] delays) to the layers that follow (read there).
  Var cross(Var x, const Packing& q, Var memory_kv, std::span<const int32_t> key_lengths,
            Var* delays = nullptr, Var* policy = nullptr) const;
  // Decoding: one position x [B, d], hard stops from `state` (advanced; a layer that follows
  // reads the policy's state and leaves it) -> [B, d]. When `weights` is given it gets what
  // each head attends to, [B, h, 1, S].
  Var step(Var x, Var memory_kv, std::span<const int32_t> key_lengths, MonotonicHeadsState& state,
           Tensor* weights = nullptr) const;
  MonotonicHeadsState make_state(int64_t B) const;

 private:
  // HeadDrop's mask of one batch, [B, h, 1, 1] (above)
  Tensor head_drop_mask(Graph& g, int64_t B) const;

  int64_t d_model_, heads_, chunk_;
  int64_t stopping_heads_;  // h, 1 (the shared policy) or 0 (following it)
  int64_t v_at_, kc_at_;    // V's and K''s columns in the projected memory (K's at 0)
  float noise_, head_drop_;
  Parameter *W_q_ = nullptr, *b_q_ = nullptr;  // [d, d], [d]; none in a layer that follows
  Parameter *W_kv_, *b_kv_;  // [2d, d], [2d] (W^K; W^V), or [3d, d] with W^K' (MoChA); [2d, d]
                             // (W^V; W^K') in a layer that follows
  Parameter* r_ = nullptr;   // [stopping heads]
  Parameter *W_qc_ = nullptr, *b_qc_ = nullptr;  // MoChA's W^Q' [d, d], [d]
  Parameter *W_out_, *b_out_;                    // W^O [d, d], [d]
};

}  // namespace heed
