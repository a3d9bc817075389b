// Multi-head attention (Vaswani et al. 2017, section 3.2.2):
//   MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W^O
//   head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V),  d_k = d_v = d_model / h
// Self-attention projects x once with the stacked [W^Q; W^K; W^V] (one GEMM) and the fused op
// reads the three blocks in place; cross-attention projects the queries from the decoder and
// the keys and values from the encoder output (once per batch: project_memory). For
// incremental decoding, a KvCache keeps the keys and values of the positions decoded so far, so
// a step costs O(t d) and not a recomputation of the prefix.
// Sequences come packed, [N, d] (autograd/ops/packing.h): the projections run on real positions
// only, and the fused attention op on the padded [B, T, .] view unpacked around it.
// Leaves out: dropout on the attention weights (the Transformer drops the sub-layer output).
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "heed/autograd/ops/attention.h"
#include "heed/autograd/ops/packing.h"
#include "heed/nn/init.h"

namespace heed {

// Keys and values of the decoded prefix, [B, capacity, d_model] each, filled position by position
// (inference only; lives in the decoding graph's arena, before its per-step mark).
struct KvCache {
  Tensor k, v;    // [B, capacity, d_model]
  int64_t t = 0;  // positions filled
  // Keeps only the rows `from` (beam search: each hypothesis continues the cache of its parent).
  void reorder(std::span<const int32_t> from, Graph& g);
  // Keeps the rows `keep` (ascending) as rows 0..n-1, moved in place; the cache becomes a view
  // of its first n rows (greedy search dropping finished sentences).
  void keep_rows(std::span<const int32_t> keep);
};

class MultiHeadAttention {
 public:
  MultiHeadAttention(int64_t d_model, int64_t heads, bool self_attention, const Scope& scope);
  int64_t heads() const { return heads_; }

  // Self-attention over packed sequences: x [N, d] -> [N, d]; `causal` for the decoder. When
  // `weights` is given it also gets the attention weights [B, h, T, T] (no gradient).
  Var self(Var x, const Packing& p, bool causal, Tensor* weights = nullptr) const;
  // One decoder position of each of B sequences with a cache: x [B, d]; appends its key and
  // value to the cache and attends over positions 0..t (causality by construction).
  Var self_step(Var x, KvCache& cache) const;
  KvCache make_cache(Graph& g, int64_t B, int64_t capacity) const;

  // Cross-attention: keys and values of the packed memory [N_s, d], projected once and
  // unpacked: [B, S, 2d] (src: the memory's packing).
  Var project_memory(Var memory, const Packing& src) const;
  // x [N_q, d] (packed as q) attends over the projected memory; key_lengths are the source
  // lengths. When `weights` is given it also gets the attention weights [B, h, T_q, S] (for
  // --attention-out; no gradient), from the same query projection. `prefix_offset`: query i
  // sees keys j <= i + offset only (wait-k reads a source prefix).
  Var cross(Var x, const Packing& q, Var memory_kv, std::span<const int32_t> key_lengths,
            Tensor* weights = nullptr, std::optional<int64_t> prefix_offset = {}) const;

 private:
  int64_t d_model_, heads_;
  Parameter *W_in_, *b_in_;    // self: [3d, d], [3d] (W^Q; W^K; W^V); cross: [d, d], [d] (W^Q)
  Parameter* W_kv_ = nullptr;  // cross only: [2d, d] (W^K; W^V)
  Parameter* b_kv_ = nullptr;  // [2d]
  Parameter *W_out_, *b_out_;  // W^O [d, d], [d]
};

}  // namespace heed
