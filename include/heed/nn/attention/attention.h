// The attention family of the RNN encoder-decoder, one mechanism per file in this folder:
//   none        c_i = h_S for every i (Cho et al. 2014: the fixed-length bottleneck)
//   bahdanau    e_ij = v^T tanh(W s_{i-1} + U h_j + b)                 (Bahdanau et al. 2015)
//   luong-dot   score(h_t, h_s) = h_t^T h_s                            (Luong et al. 2015)
//   luong-general  score = h_t^T W_a h_s
//   luong-concat   score = v_a^T tanh(W_a [h_t ; h_s])
//   local-m / local-p  a window [p_t - D, p_t + D] around an aligned position, scores of the
//               general form times exp(-(s - p_t)^2 / 2 sigma^2), sigma = D / 2
// Every mechanism masks source padding out of its softmax and returns the context vector and
// the alignment weights (for --attention-out and the heatmaps).
// Leaves out: the decoder that uses them (models/rnn_seq2seq) and multi-head attention
// (the Transformer's, with its fused kernel).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "heed/autograd/graph.h"
#include "heed/nn/init.h"

namespace heed {

enum class AttentionKind { None, Bahdanau, LuongDot, LuongGeneral, LuongConcat, LocalM, LocalP };
AttentionKind parse_attention(const std::string& name);  // "bahdanau", "luong-dot", ...
std::string attention_name(AttentionKind kind);

struct AttentionConfig {
  AttentionKind kind = AttentionKind::Bahdanau;
  int64_t query_dim = 0;   // Dq: decoder state size (s_{i-1} for Bahdanau, h_t for Luong)
  int64_t memory_dim = 0;  // Dm: annotation size (2H for a bidirectional encoder)
  int64_t attn_dim = 0;    // A: hidden size of the additive (bahdanau, concat) scorers
  int64_t window = 10;     // D: local attention half-width
};

struct Attended {
  Var context;  // c [B, Dm] = sum_j alpha_j h_j
  Var weights;  // alpha [B, S], zero on padding (and outside the local window)
};

// The source side of one batch, set once per batch by start().
struct Memory {
  Var annotations;                   // h [B, S, Dm]
  Tensor mask;                       // [B, S]: 0 for real tokens, -inf for padding
  std::span<const int32_t> lengths;  // [B] source lengths
};

class Attention {
 public:
  virtual ~Attention() = default;
  // Once per batch: keeps the memory and precomputes what does not depend on the query
  // (U h_j + b for Bahdanau, W_a h_s for luong-general).
  virtual void start(Graph& g, const Memory& memory) = 0;
  // One decoder step: query [B, Dq]; step = the target position t (local-m aligns p_t = t).
  virtual Attended attend(Graph& g, Var query, int64_t step) = 0;
  // The same mechanism and parameters with a state of its own: one per decoder, so that
  // decoders of one model can run side by side.
  virtual std::unique_ptr<Attention> clone() const = 0;
};

std::unique_ptr<Attention> make_attention(const AttentionConfig& config, const Scope& scope);

// The [B, S] additive padding mask (0 / -inf) of a batch of source lengths.
Tensor padding_mask(std::span<const int32_t> lengths, int64_t S, Graph& g);
// context [B, Dm] = alpha [B, S] applied to memory [B, S, Dm]: one batched GEMM.
Var weighted_sum(Var alpha, Var memory);

}  // namespace heed
