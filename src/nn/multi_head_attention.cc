// Multi-head attention: projections around the fused scaled dot-product attention op.
// Leaves out: the attention arithmetic (autograd/ops/attention.cc, kernels/attention.cc).
#include "heed/nn/multi_head_attention.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "heed/autograd/ops.h"
#include "heed/kernels/attention.h"
#include "heed/util/error.h"

namespace heed {

void KvCache::own_slots() {
  if (!slots.empty()) return;
  const int64_t cap = capacity();
  slots.resize(static_cast<size_t>(stride() * cap));
  for (int64_t b = 0; b < rows; ++b)
    std::fill_n(slots.begin() + b * cap, t, static_cast<int32_t>(b));
}

void KvCache::reorder(std::span<const int32_t> from) {
  check(static_cast<int64_t>(from.size()) == rows, "KvCache::reorder: ", from.size(),
        " rows for a cache of ", rows);
  own_slots();
  const int64_t cap = capacity();
  spare_.resize(slots.size());
  for (int64_t b = 0; b < rows; ++b) {
    check(from[b] >= 0 && from[b] < rows, "KvCache::reorder: row ", from[b], " of ", rows);
    std::copy_n(slots.begin() + from[b] * cap, t, spare_.begin() + b * cap);
  }
  slots.swap(spare_);
}

void KvCache::keep_rows(std::span<const int32_t> keep) {
  const auto n = static_cast<int64_t>(keep.size());
  check(n <= rows, "KvCache::keep_rows: ", n, " rows of ", rows);
  own_slots();
  const int64_t cap = capacity();
  for (int64_t r = 0; r < n; ++r)  // ascending: row keep[r] >= r is read before it is written
    std::copy_n(slots.begin() + keep[r] * cap, t, slots.begin() + r * cap);
  rows = n;
}

void KvCache::reserve(int64_t need, int64_t d_model) {
  check(rows <= 1 && slots.empty(), "KvCache::reserve: a cache of one row on the heap");
  rows = 1;
  if (k.data() != nullptr && capacity() >= need) return;
  const int64_t cap = std::max<int64_t>(16, 2 * need);
  for (Tensor* c : {&k, &v}) {
    Tensor wider = Tensor::zeros(Shape{cap, 1, d_model});
    if (t > 0) std::copy(c->data(), c->data() + t * d_model, wider.data());
    *c = std::move(wider);
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

Var MultiHeadAttention::self(Var x, const Packing& p, bool causal, Tensor* weights,
                             AttentionWindow window) const {
  Graph& g = x.graph();
  Var qkv = linear(x, g.param(*W_in_), g.param(*b_in_));  // [Q | K | V] = x [W^Q; W^K; W^V]^T
  const SdpaOptions opts{.heads = heads_,
                         .causal = causal,
                         .chunk = window.chunk,
                         .left = window.left,
                         .right = window.right};
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
  return {g.alloc(Shape{capacity, B, d_model_}), g.alloc(Shape{capacity, B, d_model_})};
}

Var MultiHeadAttention::self_step(Var x, KvCache& cache) const {
  Graph& g = x.graph();
  check(!g.training(), "self_step: cached decoding is for inference graphs");
  const int64_t B = x.dim(0), d = d_model_;
  check(x.shape() == Shape{B, d}, "self_step: x ", x.shape(), ", expected [B, ", d, "]");
  check(B == cache.rows, "self_step: ", B, " rows for a cache of ", cache.rows);
  check(cache.t < cache.capacity(), "self_step: the key/value cache holds ", cache.capacity(),
        " positions");
  Var qkv = linear(x, g.param(*W_in_), g.param(*b_in_));  // [B, 3d]: [q | k | v] per row
  const float* p = qkv.value().data();
  const int64_t t = cache.t, stride = cache.stride();
  for (int64_t b = 0; b < B; ++b) {  // k_t, v_t into block t, row b (the row's own slot)
    std::memcpy(cache.k.data() + (t * stride + b) * d, p + b * 3 * d + d, sizeof(float) * d);
    std::memcpy(cache.v.data() + (t * stride + b) * d, p + b * 3 * d + 2 * d, sizeof(float) * d);
    if (!cache.slots.empty()) cache.slots[b * cache.capacity() + t] = static_cast<int32_t>(b);
  }
  ++cache.t;
  // each row's query against its positions 0..t (causality by construction)
  Tensor attended = g.alloc(Shape{B, d});  // Concat(head_i) [B, d]
  const int64_t D = d / heads_;
  kernels::attention_cached(p, 3 * d,
                            {.K = cache.k.data(),
                             .V = cache.v.data(),
                             .T = cache.t,
                             .stride = stride,
                             .row = d,
                             .slots = cache.slots.empty() ? nullptr : cache.slots.data(),
                             .slot_stride = cache.capacity()},
                            attended.data(), d, B, heads_, D,
                            1.f / std::sqrt(static_cast<float>(D)));
  return linear(g.constant(attended), g.param(*W_out_), g.param(*b_out_));  // [B, d]
}

Var MultiHeadAttention::self_chunk(Var x, int64_t ahead, KvWindow& w, int64_t left) const {
  Graph& g = x.graph();
  check(!g.training(), "self_chunk: a stream is for inference graphs");
  const int64_t n = x.dim(0), d = d_model_, D = d / heads_, n_q = n - ahead;
  check(x.shape() == Shape{n, d} && n_q >= 1, "self_chunk: x ", x.shape(), " with ", ahead,
        " rows ahead, expected [n > ahead, ", d, "]");
  Var qkv = linear(x, g.param(*W_in_), g.param(*b_in_));  // [n, 3d]: [q | k | v] per row
  const float* p = qkv.value().data();
  // the keys and values seen: the window's m, then the n rows' own   [m + n, d] each
  const int64_t m = w.rows, Tk = m + n;
  Tensor K = g.alloc(Shape{Tk, d}), V = g.alloc(Shape{Tk, d});
  std::copy(w.k.begin(), w.k.end(), K.data());
  std::copy(w.v.begin(), w.v.end(), V.data());
  for (int64_t r = 0; r < n; ++r) {
    std::copy_n(p + r * 3 * d + d, d, K.data() + (m + r) * d);
    std::copy_n(p + r * 3 * d + 2 * d, d, V.data() + (m + r) * d);
  }
  // every query of the chunk sees every one of them: no mask
  Tensor attended = g.alloc(Shape{n_q, d});  // Concat(head_i) [n_q, d]
  Tensor lse = g.alloc(Shape{heads_, n_q});
  kernels::attention_forward(p, {0, D, 3 * d}, K.data(), {0, D, d}, V.data(), {0, D, d},
                             attended.data(), {0, D, d}, lse.data(),
                             {.B = 1, .H = heads_, .Tq = n_q, .Tk = Tk, .D = D}, {},
                             1.f / std::sqrt(static_cast<float>(D)));
  // the window: the last `left` of the keys before those ahead
  const int64_t keep = std::min(left, m + n_q);
  w.k.assign(K.data() + (m + n_q - keep) * d, K.data() + (m + n_q) * d);
  w.v.assign(V.data() + (m + n_q - keep) * d, V.data() + (m + n_q) * d);
  w.rows = keep;
  return linear(g.constant(attended), g.param(*W_out_), g.param(*b_out_));  // [n_q, d]
}

Tensor MultiHeadAttention::transpose_memory_keys(Graph& g, Var memory_kv) const {
  check(memory_kv.shape().rank() == 3 && memory_kv.dim(2) == 2 * d_model_,
        "transpose_memory_keys: memory ", memory_kv.shape(), ", expected [B, S, ", 2 * d_model_,
        "]");
  const int64_t B = memory_kv.dim(0), S = memory_kv.dim(1), D = d_model_ / heads_;
  Tensor kt = g.alloc(Shape{B, heads_, D, kernels::transposed_keys_row(S)});
  kernels::transpose_keys(memory_kv.value().data(), {S * 2 * d_model_, D, 2 * d_model_},
                          {.B = B, .H = heads_, .Tq = 0, .Tk = S, .D = D}, kt.data());
  return kt;
}

Var MultiHeadAttention::project_memory(Var memory, const Packing& src) const {
  Graph& g = memory.graph();
  check(W_kv_ != nullptr, "project_memory: not a cross-attention layer");
  return unpack(linear(memory, g.param(*W_kv_), g.param(*b_kv_)), src);  // [K | V] = m [W^K; W^V]^T
}

Var MultiHeadAttention::cross(Var x, const Packing& p, Var memory_kv,
                              std::span<const int32_t> key_lengths, Tensor* weights,
                              std::optional<int64_t> prefix_offset, const float* keys_t) const {
  Graph& g = x.graph();
  Var q = linear(x, g.param(*W_in_), g.param(*b_in_));  // Q = x W^Q  [N_q, d], packed
  const SdpaOptions opts{.heads = heads_,
                         .causal = prefix_offset.has_value(),
                         .causal_offset = prefix_offset,
                         .key_lengths = key_lengths,
                         .keys_transposed = keys_t};
  if (weights) *weights = attention_weights(unpack(q, p), slice(memory_kv, 2, 0, d_model_), opts);
  Var attended = cross_attention(q, p, memory_kv, opts);        // [N_q, d]
  return linear(attended, g.param(*W_out_), g.param(*b_out_));  // [N_q, d]
}

}  // namespace heed
