// Fused scaled dot-product attention (Vaswani et al. 2017, eq. 1), forward and backward:
//
//   Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k) + M) V
//
// computed tile by tile with an online softmax (Milakov & Gimelshein 2018; Dao et al. 2022,
// FlashAttention), so that the T_q x T_k score matrix is never stored: the extra memory is one
// [Bq, Bk] score tile and one [Bq, D] accumulator per thread in the forward, plus one [T_q, D]
// gradient accumulator per extra thread in the backward. The mask M is built on the fly from
// key lengths (padding) and causality; masked scores are -inf before the softmax.
// The tile products run in kernels/tile_gemm.h when small (sentence lengths) and in oneDNN's
// sgemm (kernels::gemm) otherwise.
// Leaves out: dropout on the attention weights, arbitrary additive masks (the naive composition
// in autograd/ops/softmax.h takes those) and returning the weights (decoding asks for those
// explicitly: attention_weights below).
#pragma once

#include <cstdint>

namespace heed::kernels {

// Where the heads of one operand live: element (b, h, t, d) of its [B, H, T, D] view is at
// data[b * batch + h * head + t * row + d]; d is contiguous. A [B, T, H*D] tensor (heads side
// by side, as a projection writes them) is {T*H*D, D, H*D}; one third of a fused Q|K|V
// projection [B, T, 3*H*D] is {3*T*H*D, D, 3*H*D} at offset 0, H*D or 2*H*D.
// Packed sequences (entry b's T_b rows back to back after entry b-1's, [N, H*D], no padding):
// `starts` gives each entry's first row, and (b, h, t, d) is at data[starts[b] * row + h * head
// + t * row + d]; `batch` is then unused, and the mask's lengths say which rows exist.
struct HeadsView {
  int64_t batch = 0, head = 0, row = 0;
  const int64_t* starts = nullptr;  // [B] when packed
  int64_t at(int64_t b, int64_t h, int64_t t) const {
    return (starts ? starts[b] * row : b * batch) + h * head + t * row;
  }
};

struct AttentionDims {
  int64_t B = 0, H = 0;    // batch, heads
  int64_t Tq = 0, Tk = 0;  // query and key positions
  int64_t D = 0;           // d_k = d_v, the size of one head
};

// The mask, computed per score instead of stored: query i of batch entry b sees key j iff
//   j < key_lengths[b]            (padding; nullptr: every key is real), and
//   j <= i + causal_offset        (when causal; the offset is Tk - Tq when the Tq queries are the
//                                  last positions of a Tk-long prefix, as in cached decoding), or
//   c C - L <= j < (c + 1) C + R  (when chunked, C = chunk > 0: self-attention, T_q = T_k, and
//                                  c = floor(i / C) is query i's chunk; L keys to its left, R
//                                  past its end: a streaming encoder's window, which a stream
//                                  computes chunk by chunk with the last L keys kept).
// A query that sees no key gets a zero output and no gradient.
struct AttentionMask {
  const int32_t* key_lengths = nullptr;  // [B]
  // [B]: queries at or past a length do not exist (packed queries): nothing is computed, read
  // or written for them (nullptr: all T_q exist)
  const int32_t* query_lengths = nullptr;
  bool causal = false;
  int64_t causal_offset = 0;
  int64_t chunk = 0, left = 0, right = 0;  // C (0: not chunked), L, R
  // The queries of entry b that exist.
  int64_t query_length(int64_t b, int64_t Tq) const;
  // The real (non-padding) keys of entry b.
  int64_t key_length(int64_t b, int64_t Tk) const;
  // One past the last key that query i of entry b sees (<= 0: none).
  int64_t key_end(int64_t b, int64_t i, int64_t Tk) const;
  // The first key query i sees (0 unless chunked).
  int64_t key_begin(int64_t i) const;
};

// O = softmax(scale * Q K^T + M) V, and lse[(b*H + h)*Tq + i] = log sum_j exp(scale q_i.k_j)
// over the visible keys (-inf for a query that sees none), kept for the backward.
// Kt: the keys already transposed by transpose_keys (below), or nullptr. A tile of at least
// kAbtTransposeRows queries (tile_gemm.h) transposes its key tile for the score product; with Kt
// it reads that from Kt instead, the same floats: beam search's K queries a source against the
// same memory at every step, whose keys are then transposed once.
void attention_forward(const float* Q, const HeadsView& q, const float* K, const HeadsView& k,
                       const float* V, const HeadsView& v, float* O, const HeadsView& o, float* lse,
                       const AttentionDims& dims, const AttentionMask& mask, float scale,
                       const float* Kt = nullptr);

// Kt[b, h] = K[b, h]^T, [B, H, D, transposed_keys_row(Tk)], the columns past T_k zero: the keys
// of attention_forward as its score products read them.
int64_t transposed_keys_row(int64_t Tk);
void transpose_keys(const float* K, const HeadsView& k, const AttentionDims& dims, float* Kt);

// The backward from O, lse and dO, recomputing each score tile (FlashAttention-2's order: key
// tiles outside, so dK and dV of a tile are finished by one thread):
//   P  = exp(scale Q K^T - lse)          dV += P^T dO
//   dP = dO V^T                          dS  = P * (dP - rowsum(dO * O))
//   dQ += scale dS K                     dK += scale dS^T Q
// dQ, dK and dV accumulate (+=) into memory laid out by dq, dk and dv.
void attention_backward(const float* Q, const HeadsView& q, const float* K, const HeadsView& k,
                        const float* V, const HeadsView& v, const float* O, const HeadsView& o,
                        const float* dO, const HeadsView& dout, const float* lse, float* dQ,
                        const HeadsView& dq, float* dK, const HeadsView& dk, float* dV,
                        const HeadsView& dv, const AttentionDims& dims, const AttentionMask& mask,
                        float scale);

// One query per row against a key/value cache filled position by position (incremental
// decoding). Row b's key at position j < T is the cache row
//   K + (j * stride + slot_b(j)) * row,   slot_b(j) = slots[b * slot_stride + j], or b itself
// when slots is nullptr (no row has moved since the cache began); its value is the same row of V,
// and head h is the D floats at h * D of it. For each row b and head h:
//   o_bh = sum_{j < T} softmax_j(scale q_bh . k_bjh) v_bjh
// The keys are read where they are, so beam search reorders a cache by its slot numbers and
// never moves keys and values; the scores are [H, T] per row, never [B, H, 1, T].
struct CacheView {
  const float* K = nullptr;
  const float* V = nullptr;
  int64_t T = 0;       // positions filled
  int64_t stride = 0;  // rows per position block
  int64_t row = 0;     // floats per row of a block (H * D, or more)
  const int32_t* slots = nullptr;
  int64_t slot_stride = 0;  // slots of one row: [T] at slots + b * slot_stride
};
// Q: row b's query at Q + b * q_row ([H * D]); O: row b's output at O + b * o_row.
void attention_cached(const float* Q, int64_t q_row, const CacheView& cache, float* O,
                      int64_t o_row, int64_t B, int64_t H, int64_t D, float scale);

// The attention weights themselves, W[(b*H + h)*Tq + i, j] = softmax(scale Q K^T + M)_ij,
// [B, H, Tq, Tk] (masked entries 0): for --attention-out and the heatmaps, not for training.
void attention_weights(const float* Q, const HeadsView& q, const float* K, const HeadsView& k,
                       float* W, const AttentionDims& dims, const AttentionMask& mask, float scale);

}  // namespace heed::kernels
