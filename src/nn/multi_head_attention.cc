// Multi-head attention: projections around the fused scaled dot-product attention op.
// Leaves out: the attention arithmetic (autograd/ops/attention.cc, kernels/attention.cc).
#include "heed/nn/multi_head_attention.h"

#include <algorithm>
#include <cstring>

#include "heed/autograd/ops.h"
#include "heed/kernels/layout.h"
#include "heed/util/error.h"

namespace heed {

void KvCache::reorder(std::span<const int32_t> from, Graph& g) {
  const int64_t B = k.shape().dim(0), row = k.shape().dim(1) * k.shape().dim(2);
  const int64_t filled = t * k.shape().dim(2);  // only the positions decoded so far move
  check(static_cast<int64_t>(from.size()) == B, "KvCache::reorder: ", from.size(),
        " rows for a cache of ", B);
  for (Tensor* c : {&k, &v}) {
    Tensor old = g.alloc(Shape{B, filled});  // freed with the step
    for (int64_t b = 0; b < B; ++b)
      std::memcpy(old.data() + b * filled, c->data() + b * row, sizeof(float) * filled);
    for (int64_t b = 0; b < B; ++b)
      std::memcpy(c->data() + b * row, old.data() + from[b] * filled, sizeof(float) * filled);
  }
}

void KvCache::keep_rows(std::span<const int32_t> keep) {
  const int64_t row = k.shape().dim(1) * k.shape().dim(2), filled = t * k.shape().dim(2);
  const auto n = static_cast<int64_t>(keep.size());
  check(n <= k.shape().dim(0), "KvCache::keep_rows: ", n, " rows of ", k.shape().dim(0));
  for (Tensor* c : {&k, &v}) {
    kernels::keep_rows(c->data(), row, filled, keep);  // the positions decoded so far
    *c = c->rows(0, n);
  }
}

MultiHeadAttention::MultiHeadAttention(int64_t d_model, int64_t heads, bool self_attention,
                                       const Scope& scope)
    : d_model_(d_model), heads_(heads) {
  check(heads >= 1 && d_model % heads == 0, "multi-head attention: d_model ", d_model,
        " is not divisible by ", heads, " heads");
  const int64_t d = d_model;
  if (self_attention) {
    W_in_ = &scope.param("W_qkv", {3 * d, d}, Init::glorot_uniform());
    b_in_ = &scope.param("b_qkv", {3 * d}, Init::zeros());
  } else {
    W_in_ = &scope.param("W_q", {d, d}, Init::glorot_uniform());
    b_in_ = &scope.param("b_q", {d}, Init::zeros());
    W_kv_ = &scope.param("W_kv", {2 * d, d}, Init::glorot_uniform());
    b_kv_ = &scope.param("b_kv", {2 * d}, Init::zeros());
  }
  W_out_ = &scope.param("W_o", {d, d}, Init::glorot_uniform());
  b_out_ = &scope.param("b_o", {d}, Init::zeros());
}

Var MultiHeadAttention::self(Var x, const Packing& p, bool causal, Tensor* weights) const {
  Graph& g = x.graph();
  Var qkv = linear(x, g.param(*W_in_), g.param(*b_in_));  // [Q | K | V] = x [W^Q; W^K; W^V]^T
  const SdpaOptions opts{.heads = heads_, .causal = causal};
  if (weights) {  // the heatmaps read the padded view: [N, 3d] -> [B, T, 3d]
    Var padded = unpack(qkv, p);
    SdpaOptions w_opts = opts;
    w_opts.key_lengths = p.lengths;
    *weights =
        attention_weights(slice(padded, 2, 0, d_model_), slice(padded, 2, d_model_, d_model_),
                          w_opts);  // [B, h, T, T]
  }
  Var attended = self_attention(qkv, p, opts);                  // on the packed rows: [N, d]
  return linear(attended, g.param(*W_out_), g.param(*b_out_));  // Concat(head_i) W^O [N, d]
}

KvCache MultiHeadAttention::make_cache(Graph& g, int64_t B, int64_t capacity) const {
  return {g.alloc(Shape{B, capacity, d_model_}), g.alloc(Shape{B, capacity, d_model_}), 0};
}

Var MultiHeadAttention::self_step(Var x, KvCache& cache) const {
  Graph& g = x.graph();
  check(!g.training(), "self_step: cached decoding is for inference graphs");
  const int64_t B = x.dim(0), d = d_model_, cap = cache.k.shape().dim(1);
  check(x.shape() == Shape{B, d}, "self_step: x ", x.shape(), ", expected [B, ", d, "]");
  check(cache.t < cap, "self_step: the key/value cache holds ", cap, " positions");
  Var qkv = reshape(linear(x, g.param(*W_in_), g.param(*b_in_)), Shape{B, 1, 3 * d});  // [B, 1, 3d]
  const float* p = qkv.value().data();
  for (int64_t b = 0; b < B; ++b) {  // k_t, v_t into row t of the cache
    std::memcpy(cache.k.data() + (b * cap + cache.t) * d, p + b * 3 * d + d, sizeof(float) * d);
    std::memcpy(cache.v.data() + (b * cap + cache.t) * d, p + b * 3 * d + 2 * d, sizeof(float) * d);
  }
  ++cache.t;
  // positions 0..t are the keys; later rows of the cache are masked as padding
  int32_t* len = g.arena().array<int32_t>(B);
  std::fill(len, len + B, static_cast<int32_t>(cache.t));
  Var attended = scaled_dot_product_attention(
      slice(qkv, 2, 0, d), g.constant(cache.k), g.constant(cache.v),
      {.heads = heads_, .key_lengths = std::span<const int32_t>(len, B)});
  return linear(reshape(attended, Shape{B, d}), g.param(*W_out_), g.param(*b_out_));  // [B, d]
}

Var MultiHeadAttention::project_memory(Var memory, const Packing& src) const {
  Graph& g = memory.graph();
  check(W_kv_ != nullptr, "project_memory: not a cross-attention layer");
  return unpack(linear(memory, g.param(*W_kv_), g.param(*b_kv_)), src);  // [K | V] = m [W^K; W^V]^T
}

Var MultiHeadAttention::cross(Var x, const Packing& p, Var memory_kv,
                              std::span<const int32_t> key_lengths, Tensor* weights,
                              std::optional<int64_t> prefix_offset) const {
  Graph& g = x.graph();
  Var q = linear(x, g.param(*W_in_), g.param(*b_in_));  // Q = x W^Q  [N_q, d], packed
  const SdpaOptions opts{.heads = heads_,
                         .causal = prefix_offset.has_value(),
                         .causal_offset = prefix_offset,
                         .key_lengths = key_lengths};
  if (weights) *weights = attention_weights(unpack(q, p), slice(memory_kv, 2, 0, d_model_), opts);
  Var attended = cross_attention(q, p, memory_kv, opts);        // [N_q, d]
  return linear(attended, g.param(*W_out_), g.param(*b_out_));  // [N_q, d]
}

}  // namespace heed
