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
#include <utility>
#include <vector>

#include "heed/autograd/ops/attention.h"
#include "heed/autograd/ops/packing.h"
#include "heed/nn/init.h"

namespace heed {

// Keys and values of the decoded prefix (inference only), kept position by position: k and v are
// [capacity, stride, d_model], position j of every row in block j (written at step j, then only
// read). Row b's key and value at position j are block j's row slot(b, j): b itself until the
// rows move, after which `slots` holds each row's history. So beam search reorders a cache by
// copying t slot numbers per row, never t keys and values (an index-indirected cache; CTranslate2
// gathers its cache instead), and drops finished rows the same way. Lives in the decoding
// graph's arena, before its per-step mark (or on the heap: reserve()).
struct KvCache {
  KvCache() = default;
  KvCache(Tensor keys, Tensor values)  // [capacity, B, d_model] each, B rows, none filled
      : k(std::move(keys)), v(std::move(values)), rows(k.shape().dim(1)) {}
  Tensor k, v;                 // [capacity, stride, d_model]
  int64_t t = 0;               // positions filled
  int64_t rows = 0;            // live rows, 0..stride-1 (fewer once keep_rows dropped some)
  std::vector<int32_t> slots;  // [stride, capacity]; empty: slot(b, j) = b
  int64_t capacity() const { return k.shape().dim(0); }
  int64_t stride() const { return k.shape().dim(1); }
  // Each row continues the cache of row from[b] (beam search: a hypothesis that of its parent).
  void reorder(std::span<const int32_t> from);
  // Keeps the rows `keep` (ascending) as rows 0..n-1 (greedy and beam search dropping finished
  // sentences).
  void keep_rows(std::span<const int32_t> keep);
  // One row on the heap (a causal encoder's positions, one at a time): room for `need`
  // positions of d_model, the capacity at least doubled when it grows, the t filled kept.
  void reserve(int64_t need, int64_t d_model);

 private:
  std::vector<int32_t> spare_;  // reorder's other table
  void own_slots();             // makes slot(b, j) = b explicit
};

// The keys and values a chunked self-attention's next chunk sees to its left (a streaming
// encoder's, SdpaOptions::chunk): the last `left` positions' of one sequence, [rows, d_model]
// each, on the heap, carried from chunk to chunk outside any graph.
struct KvWindow {
  std::vector<float> k, v;
  int64_t rows = 0;
};

// A chunked self-attention's window (SdpaOptions' chunk, left, right; chunk 0: none).
struct AttentionWindow {
  int64_t chunk = 0, left = 0, right = 0;
};

class MultiHeadAttention {
 public:
  MultiHeadAttention(int64_t d_model, int64_t heads, bool self_attention, const Scope& scope);
  int64_t heads() const { return heads_; }

  // Self-attention over packed sequences: x [N, d] -> [N, d]; `causal` for the decoder, or a
  // chunked window (SdpaOptions' chunk, left, right; chunk 0: none). When `weights` is given it
  // also gets the attention weights [B, h, T, T] (no gradient).
  Var self(Var x, const Packing& p, bool causal, Tensor* weights = nullptr,
           AttentionWindow window = {}) const;
  // One decoder position of each of B sequences with a cache: x [B, d]; appends its key and
  // value to the cache and attends over positions 0..t (causality by construction).
  Var self_step(Var x, KvCache& cache) const;
  KvCache make_cache(Graph& g, int64_t B, int64_t capacity) const;
  // The next chunk of one sequence in a chunked self-attention: x [n, d] holds the chunk's n -
  // ahead positions and, in its last `ahead` rows, the positions past its end it also sees; the
  // chunk's queries attend over the window's keys, its own and those ahead -> [n - ahead, d], what
  // self() with chunk n - ahead, left `left` and right `ahead` gives those positions. The window
  // then keeps the last `left` of its keys and the chunk's (not those ahead: they come again as the
  // next chunk's own).
  Var self_chunk(Var x, int64_t ahead, KvWindow& window, int64_t left) const;

  // Cross-attention: keys and values of the packed memory [N_s, d], projected once and
  // unpacked: [B, S, 2d] (src: the memory's packing).
  Var project_memory(Var memory, const Packing& src) const;
  // x [N_q, d] (packed as q) attends over the projected memory; key_lengths are the source
  // lengths. When `weights` is given it also gets the attention weights [B, h, T_q, S] (for
  // --attention-out; no gradient), from the same query projection. `prefix_offset`: query i
  // sees keys j <= i + offset only (wait-k reads a source prefix).
  // keys_t: the memory's keys transposed by transpose_memory_keys (inference), or nullptr.
  Var cross(Var x, const Packing& q, Var memory_kv, std::span<const int32_t> key_lengths,
            Tensor* weights = nullptr, std::optional<int64_t> prefix_offset = {},
            const float* keys_t = nullptr) const;
  // The keys of a projected memory [B, S, 2d] transposed head by head, [B, h, d / h,
  // kernels::transposed_keys_row(S)], in g's arena: what cross()'s score products read when
  // several queries of one memory row attend at every step (beam search's rows of a source).
  Tensor transpose_memory_keys(Graph& g, Var memory_kv) const;

 private:
  int64_t d_model_, heads_;
  Parameter *W_in_, *b_in_;    // self: [3d, d], [3d] (W^Q; W^K; W^V); cross: [d, d], [d] (W^Q)
  Parameter* W_kv_ = nullptr;  // cross only: [2d, d] (W^K; W^V)
  Parameter* b_kv_ = nullptr;  // [2d]
  Parameter *W_out_, *b_out_;  // W^O [d, d], [d]
};

}  // namespace heed
