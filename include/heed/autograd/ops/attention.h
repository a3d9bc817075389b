// Scaled dot-product attention over h heads on the graph (Vaswani et al. 2017, eq. 1):
//   Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k) + M) V
// as one fused op with its own backward (kernels/attention.h: tiled, online softmax, no
// T_q x T_k matrix), reading the heads where a projection wrote them, side by side in the last
// axis, so no transpose or copy is needed around it. The masks (padding from key lengths,
// causal, chunked) are computed per score, not stored.
// Leaves out: the projections W^Q, W^K, W^V, W^O (nn/ multi-head attention) and dropout on the
// weights (the Transformer applies dropout to the output instead).
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "heed/autograd/graph.h"
#include "heed/autograd/ops/packing.h"

namespace heed {

struct SdpaOptions {
  int64_t heads = 1;                          // h; d_k = d_v = width / h
  bool causal = false;                        // query i sees keys j <= i + causal_offset
  std::optional<int64_t> causal_offset = {};  // default T_k - T_q (the queries are the last
                                              // T_q positions); wait-k: its own
  std::span<const int32_t> key_lengths =
      {};             // [B]: keys at or past a length are padding (empty: none)
  float scale = 0.f;  // 0: 1 / sqrt(d_k)
  // Chunked self-attention (T_q = T_k; not with causal), chunk C > 0: query i sees the keys of
  // its chunk c = floor(i / C), `left` before it and `right` after it:
  //   c C - left <= j < (c + 1) C + right     (kernels/attention.h)
  int64_t chunk = 0, left = 0, right = 0;
  // Inference: the keys already transposed, [B, h, d_k, kernels::transposed_keys_row(T_k)]
  // (kernels::transpose_keys; a memory that many steps' queries attend over), or nullptr.
  const float* keys_transposed = nullptr;
};

// q [B, Tq, h*d], k and v [B, Tk, h*d] -> [B, Tq, h*d] (head j in columns [j*d, (j+1)*d)).
Var scaled_dot_product_attention(Var q, Var k, Var v, const SdpaOptions& opts);

// Self-attention from one fused projection: qkv [B, T, 3*h*d] holds Q | K | V side by side
// (one GEMM x [W^Q; W^K; W^V]^T made it); -> [B, T, h*d]. Gradients land in qkv's gradient.
Var self_attention(Var qkv, const SdpaOptions& opts);

// Cross-attention with the keys and values of one fused projection of the memory:
// q [B, Tq, h*d], kv [B, Tk, 2*h*d] holding K | V side by side -> [B, Tq, h*d].
Var cross_attention(Var q, Var kv, const SdpaOptions& opts);

// The packed forms: the rows of B sequences back to back, without padding (ops/packing.h), so
// no pack/unpack copies are needed around the op and no padding query is computed.
// qkv [N, 3*h*d] of the sequences of p -> [N, h*d]; keys past each sequence's end do not exist.
Var self_attention(Var qkv, const Packing& p, const SdpaOptions& opts);
// q [N, h*d] packed by p, kv [B, Tk, 2*h*d] padded (opts.key_lengths masks it) -> [N, h*d].
Var cross_attention(Var q, const Packing& p, Var kv, const SdpaOptions& opts);

// The weights softmax(Q K^T / sqrt(d_k) + M), [B, h, Tq, Tk], as a constant (no gradient):
// what --attention-out and the heatmaps show.
Tensor attention_weights(Var q, Var k, const SdpaOptions& opts);

}  // namespace heed
