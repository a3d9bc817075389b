// Fused scaled dot-product attention: tiles, online softmax, recomputation in the backward.
// The tile products run in kernels/tile_gemm.h when small (sentences: oneDNN's call overhead
// dominates there) and in oneDNN's sgemm otherwise (long sequences: full 64 x 128 tiles).
#include "heed/kernels/attention.h"

#include <omp.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "heed/kernels/gemm.h"
#include "heed/kernels/parallel.h"
#include "heed/kernels/tile_gemm.h"
#include "heed/kernels/vmath.h"

namespace heed::kernels {
namespace {

constexpr int64_t kTileQ = 64;   // query rows per tile
constexpr int64_t kTileK = 128;  // key rows per tile
static_assert(kTileK % kTileLanes == 0, "score rows are processed in whole vectors");
constexpr int kMaxThreads = 64;  // backward: private dQ accumulators are kept for at most these
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// Per-thread scratch that grows to the largest request and is then reused, so that steady-state
// training allocates nothing. Slots: 0 score/probability tile, 1 accumulator or dP tile,
// 2 running max and sum, 3 rowsum(dO * O), 4 a private dQ, 5 a transposed key tile.
float* scratch(int slot, size_t n) {
  thread_local std::array<std::vector<float>, 6> buf;
  if (buf[slot].size() < n) buf[slot].resize(n);
  return buf[slot].data();
}

int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

// The entries [lo, hi) of a tile row that query i sees among keys [j0, j0 + width) (lo >= hi:
// none). Read into plain locals, not a structured binding: clang 14 (make test-tsan, make fuzz)
// cannot capture one in an OpenMP region.
struct Visible {
  int64_t lo, hi;
};
Visible visible(const AttentionMask& mask, int64_t b, int64_t i, int64_t j0, int64_t width,
                int64_t Tk) {
  return {std::clamp<int64_t>(mask.key_begin(i) - j0, 0, width),
          std::clamp<int64_t>(mask.key_end(b, i, Tk) - j0, 0, width)};
}

// The tile products: those of a query tile [bq, D] with a key tile [bk, D] run in tile_gemm
// when the score product fits there (and so the others, of the same size), else in oneDNN.
bool small_tile(int64_t bq, int64_t bk, int64_t D) {
  return tile_gemm_fits(bq, round_up_lanes(bk), D) && tile_gemm_fits(bq, D, bk);
}

// S[bq, bk] = alpha A B^T: A [bq, D] (rows lda), B [bk, D] (rows ldb), or B^T [D, >= bk] (rows
// ldt) when Bt is given. On the small path the columns bk .. round_up_lanes(bk) of S are written
// too (zeros, or the scores of the keys past bk that Bt holds: outside the tile's visible range).
void tile_abt(bool small, int64_t bq, int64_t bk, int64_t D, float alpha, const float* A,
              int64_t lda, const float* B, int64_t ldb, const float* Bt, int64_t ldt, float* S) {
  if (small)
    tile_gemm_abt(bq, bk, D, alpha, A, lda, B, ldb, S, kTileK, scratch(5, D * kTileK), Bt, ldt);
  else
    gemm(false, true, bq, bk, D, alpha, A, lda, B, ldb, 0.f, S, kTileK);
}

// C[M, N] += alpha op(P) B with P a [., kTileK] tile, op(P) = P [M, K] or P^T (trans).
void tile_pb(bool small, bool trans, int64_t M, int64_t N, int64_t K, float alpha, const float* P,
             const float* B, int64_t ldb, float* C, int64_t ldc) {
  if (small)
    tile_gemm(M, N, K, alpha, P, trans ? 1 : kTileK, trans ? kTileK : 1, B, ldb, 1.f, C, ldc);
  else
    gemm(trans, false, M, N, K, alpha, P, kTileK, B, ldb, 1.f, C, ldc);
}

}  // namespace

int64_t AttentionMask::key_length(int64_t b, int64_t Tk) const {
  return key_lengths ? std::min<int64_t>(key_lengths[b], Tk) : Tk;
}

int64_t AttentionMask::query_length(int64_t b, int64_t Tq) const {
  return query_lengths ? std::min<int64_t>(query_lengths[b], Tq) : Tq;
}

int64_t AttentionMask::key_end(int64_t b, int64_t i, int64_t Tk) const {
  const int64_t end = key_length(b, Tk);
  if (chunk > 0) return std::min(end, (i / chunk + 1) * chunk + right);
  return causal ? std::min(end, i + causal_offset + 1) : end;
}

int64_t AttentionMask::key_begin(int64_t i) const {
  return chunk > 0 ? std::max<int64_t>(0, i / chunk * chunk - left) : 0;
}

// One tile of queries [i0, i0 + bq) of head (b, h) at a time, keys in tiles of kTileK:
//   S = scale Q_i K_j^T                        [bq, bk]
//   m' = max(m, rowmax S),  P = exp(S - m')    (masked entries 0)
//   l = l e^{m - m'} + rowsum P,  A = A e^{m - m'} + P V_j,  m = m'
// and at the end O_i = A / l, lse_i = m + log l.
namespace {
// Asks for the n floats at p in cache ahead of their reads, a 64-byte line at a time.
void prefetch_floats(const float* p, int64_t n) {
  for (int64_t i = 0; i < n; i += 16) __builtin_prefetch(p + i, 0, 3);
}
}  // namespace

void attention_forward(const float* Q, const HeadsView& q, const float* K, const HeadsView& k,
                       const float* V, const HeadsView& v, float* O, const HeadsView& o, float* lse,
                       const AttentionDims& dims, const AttentionMask& mask, float scale,
                       const float* Kt) {
  // plain locals, not a structured binding: the lambdas capture them (clang < 16 cannot)
  const int64_t B = dims.B, H = dims.H, Tq = dims.Tq, Tk = dims.Tk, D = dims.D;
  const int64_t n_qt = ceil_div(Tq, kTileQ), kt_row = transposed_keys_row(Tk);
  // an item is one query tile against all keys: ~2 bq Tk D multiply-adds
  const int64_t grain = grain_for(kSerialWork, 2 * std::min(Tq, kTileQ) * Tk * D);
  parallel_for(B * H * n_qt, grain, [&](int64_t begin, int64_t end) {
    float* S = scratch(0, kTileQ * kTileK);  // [bq, kTileK]
    float* A = scratch(1, kTileQ * D);       // [bq, D]
    float* m = scratch(2, 2 * kTileQ);       // running max, then running sum
    float* l = m + kTileQ;
    for (int64_t item = begin; item < end; ++item) {
      const int64_t bh = item / n_qt, b = bh / H, h = bh % H;
      // Decoding's cross-attention (keys transposed once): over a batch the memories are out of
      // L2 (32 sentences x 4 layers, ~3 MB), so the next head's keys and values are asked for
      // while this one's are read
      if (Kt && item % n_qt == 0 && bh + 1 < B * H) {
        const int64_t nb = (bh + 1) / H, nh = (bh + 1) % H;
        prefetch_floats(Kt + ((bh + 1) * D) * kt_row, D * kt_row);
        for (int64_t j = 0; j < Tk; ++j) prefetch_floats(V + v.at(nb, nh, j), D);
      }
      const int64_t i0 = (item % n_qt) * kTileQ, q_len = mask.query_length(b, Tq);
      if (i0 >= q_len) continue;  // packed: past this entry's queries
      const int64_t bq = std::min(kTileQ, q_len - i0);
      // the last row sees the most, the first from the earliest key
      const int64_t k_end = mask.key_end(b, i0 + bq - 1, Tk), k_begin = mask.key_begin(i0);
      std::fill(m, m + bq, kNegInf);
      std::fill(l, l + bq, 0.f);
      std::fill(A, A + bq * D, 0.f);
      const float* Qi = Q + q.at(b, h, i0);
      for (int64_t j0 = k_begin; j0 < k_end; j0 += kTileK) {
        const int64_t bk = std::min(kTileK, k_end - j0);
        const float* Kj = K + k.at(b, h, j0);
        const bool small = small_tile(bq, bk, D);
        // Kt's columns j0 .. j0 + round_up_lanes(bk) exist when j0 is a whole number of vectors
        const float* Ktj =
            Kt && j0 % kTileLanes == 0 ? Kt + ((b * H + h) * D) * kt_row + j0 : nullptr;
        tile_abt(small, bq, bk, D, scale, Qi, q.row, Kj, k.row, Ktj, kt_row, S);
        for (int64_t r = 0; r < bq; ++r) {
          float* s = S + r * kTileK;
          const Visible vis = visible(mask, b, i0 + r, j0, bk, Tk);
          const int64_t lo = vis.lo, n = vis.hi;
          if (lo >= n) {
            std::fill(s, s + bk, 0.f);
            continue;
          }
          const float m_new = std::max(m[r], vmath::max(s + lo, n - lo, kNegInf));
          // whole vectors (a sentence's 10-40 keys would run mostly in the loop's scalar tail);
          // the columns outside [lo, n) become 0
          const int64_t w = round_up_lanes(bk);
#pragma omp simd
          for (int64_t c = 0; c < w; ++c) s[c] = c >= lo && c < n ? vmath::exp(s[c] - m_new) : 0.f;
          const float sum = vmath::sum(s + lo, n - lo);
          const float alpha = vmath::exp(m[r] - m_new);  // 0 while m was -inf
          l[r] = l[r] * alpha + sum;
          m[r] = m_new;
          if (alpha != 1.f)
            for (int64_t d = 0; d < D; ++d) A[r * D + d] *= alpha;
        }
        tile_pb(small, false, bq, D, bk, 1.f, S, V + v.at(b, h, j0), v.row, A, D);
      }
      for (int64_t r = 0; r < bq; ++r) {
        float* out = O + o.at(b, h, i0 + r);
        const float inv = l[r] > 0.f ? 1.f / l[r] : 0.f;
        for (int64_t d = 0; d < D; ++d) out[d] = A[r * D + d] * inv;
        lse[bh * Tq + i0 + r] = l[r] > 0.f ? m[r] + std::log(l[r]) : kNegInf;
      }
    }
  });
}

int64_t transposed_keys_row(int64_t Tk) {
  return round_up_lanes(Tk);
}

void transpose_keys(const float* K, const HeadsView& k, const AttentionDims& dims, float* Kt) {
  const int64_t H = dims.H, D = dims.D, row = transposed_keys_row(dims.Tk);
  parallel_for(dims.B * H, grain_for(kSerialWork, dims.Tk * D), [&](int64_t begin, int64_t end) {
    for (int64_t bh = begin; bh < end; ++bh)
      transpose_tile(K + k.at(bh / H, bh % H, 0), k.row, dims.Tk, D, Kt + bh * D * row, row);
  });
}

void attention_cached(const float* Q, int64_t q_row, const CacheView& c, float* O, int64_t o_row,
                      int64_t B, int64_t H, int64_t D, float scale) {
  const int64_t T = c.T;
  // A row's positions are a block apart (stride rows of the cache), too far for the hardware's
  // prefetchers: with a beam's 160 rows the cache is out of L2 and each key row read missed
  // (measured: half of this kernel's time on those loads). So the key row kAhead positions on
  // and this position's value row are asked for while position j's scores are computed, and the
  // next row's first keys while this row's values are summed.
  constexpr int64_t kAhead = 4;
  // an item is one row: ~2 T H D multiply-adds, every key and value row read once, in order
  parallel_for(B, grain_for(kSerialWork, 2 * T * H * D), [&](int64_t begin, int64_t end) {
    float* s = scratch(0, static_cast<size_t>(H * T));  // [H, T]: scores, then probabilities
    float* inv = scratch(2, static_cast<size_t>(H));    // 1 / sum_j exp(...) per head
    // row r's key or value at position j: its offset in c.K or c.V
    auto at = [&](int64_t r, int64_t j) {
      return (j * c.stride + (c.slots ? c.slots[r * c.slot_stride + j] : r)) * c.row;
    };
    for (int64_t j = 0; j < std::min(kAhead, T); ++j) prefetch_floats(c.K + at(begin, j), H * D);
    for (int64_t b = begin; b < end; ++b) {
      const float* q = Q + b * q_row;
      for (int64_t j = 0; j < T; ++j) {  // s_hj = scale q_h . k_jh
        const float* k = c.K + at(b, j);
        if (j + kAhead < T) prefetch_floats(c.K + at(b, j + kAhead), H * D);
        prefetch_floats(c.V + at(b, j), H * D);
        int64_t h = 0;
        if (D % kTileLanes == 0)
          for (; h + 4 <= H; h += 4) {  // four heads' sums in one tree (the same floats)
            float dots[4];
            vmath::dot4(q + h * D, D, k + h * D, D, D, dots);
            for (int64_t i = 0; i < 4; ++i) s[(h + i) * T + j] = scale * dots[i];
          }
        for (; h < H; ++h) s[h * T + j] = scale * vmath::dot(q + h * D, k + h * D, D);
      }
      for (int64_t h = 0; h < H; ++h) {  // p_hj = exp(s_hj - max_j s_hj), unnormalised
        float* sh = s + h * T;
        const float m = vmath::max(sh, T, kNegInf);
#pragma omp simd
        for (int64_t j = 0; j < T; ++j) sh[j] = vmath::exp(sh[j] - m);
        const float sum = vmath::sum(sh, T);
        inv[h] = sum > 0.f ? 1.f / sum : 0.f;
      }
      float* o = O + b * o_row;
      std::fill(o, o + H * D, 0.f);
      if (b + 1 < end)  // the next row's first keys
        for (int64_t j = 0; j < std::min(kAhead, T); ++j)
          prefetch_floats(c.K + at(b + 1, j), H * D);
      for (int64_t j = 0; j < T; ++j) {  // o_h = sum_j p_hj v_jh / sum
        const float* v = c.V + at(b, j);
        for (int64_t h = 0; h < H; ++h) {
          const float p = s[h * T + j] * inv[h];
          float* oh = o + h * D;
          const float* vh = v + h * D;
#pragma omp simd
          for (int64_t d = 0; d < D; ++d) oh[d] += p * vh[d];
        }
      }
    }
  });
}

void attention_backward(const float* Q, const HeadsView& q, const float* K, const HeadsView& k,
                        const float* V, const HeadsView& v, const float* O, const HeadsView& o,
                        const float* dO, const HeadsView& dout, const float* lse, float* dQ,
                        const HeadsView& dq, float* dK, const HeadsView& dk, float* dV,
                        const HeadsView& dv, const AttentionDims& dims, const AttentionMask& mask,
                        float scale) {
  // plain locals, not a structured binding: the lambdas capture them (clang < 16 cannot)
  const int64_t B = dims.B, H = dims.H, Tq = dims.Tq, Tk = dims.Tk, D = dims.D;
  // Delta_i = rowsum(dO_i * O_i) = sum_j P_ij dP_ij, the softmax backward's inner product
  float* delta = scratch(3, B * H * Tq);
  parallel_for(B * H * Tq, 256, [&](int64_t begin, int64_t end) {
    for (int64_t n = begin; n < end; ++n) {
      const int64_t bh = n / Tq, b = bh / H, h = bh % H, i = n % Tq;
      if (i >= mask.query_length(b, Tq)) continue;  // no such query: delta unread
      const float *x = dO + dout.at(b, h, i), *y = O + o.at(b, h, i);
      float s = 0.f;
#pragma omp simd reduction(+ : s)
      for (int64_t d = 0; d < D; ++d) s += x[d] * y[d];
      delta[n] = s;
    }
  });
  const int64_t n_kt = ceil_div(Tk, kTileK), n_items = B * H * n_kt;
  const int nt = omp_in_parallel() ? 1
                                   : static_cast<int>(std::min<int64_t>(
                                         {omp_get_max_threads(), n_items, int64_t{kMaxThreads}}));
  const int64_t per = ceil_div(n_items, nt);
  // Thread 0 accumulates dQ in place; thread t > 0 into its own zeroed copy of the heads its
  // items touch, [first_bh[t], last head], added to dQ after the parallel region.
  std::array<float*, kMaxThreads> private_dq{};
  std::array<int64_t, kMaxThreads> first_bh{}, n_bh{};
#pragma omp parallel num_threads(nt)
  {
    const int t = omp_get_thread_num();
    const int64_t begin = t * per, end = std::min(n_items, begin + per);
    if (begin < end) {
      float* S = scratch(0, kTileQ * kTileK);   // P [bq, kTileK]
      float* dP = scratch(1, kTileQ * kTileK);  // dP, then dS [bq, kTileK]
      first_bh[t] = begin / n_kt;
      n_bh[t] = (end - 1) / n_kt - first_bh[t] + 1;
      float* mine = nullptr;
      if (t > 0) {
        mine = scratch(4, n_bh[t] * Tq * D);
        std::memset(mine, 0, sizeof(float) * n_bh[t] * Tq * D);
        private_dq[t] = mine;
      }
      for (int64_t item = begin; item < end; ++item) {
        const int64_t bh = item / n_kt, b = bh / H, h = bh % H;
        const int64_t j0 = (item % n_kt) * kTileK;
        const int64_t key_len = mask.key_length(b, Tk);
        if (j0 >= key_len) continue;  // padding keys: no gradient
        const int64_t bk = std::min({kTileK, Tk - j0, key_len - j0});
        const float *Kj = K + k.at(b, h, j0), *Vj = V + v.at(b, h, j0);
        float *dKj = dK + dk.at(b, h, j0), *dVj = dV + dv.at(b, h, j0);
        const bool small = small_tile(std::min(kTileQ, Tq), bk, D);
        // causal: query i sees key j0 from i = j0 - offset on; chunked: the queries of chunks
        // floor((j0 - R) / C) .. ceil((j0 + bk + L) / C) - 1
        int64_t i_first = mask.causal ? std::max<int64_t>(0, j0 - mask.causal_offset) : 0;
        int64_t q_len = mask.query_length(b, Tq);
        if (mask.chunk > 0) {
          const int64_t C = mask.chunk;
          i_first = std::max<int64_t>(0, j0 - mask.right) / C * C;
          q_len = std::min(q_len, ceil_div(j0 + bk + mask.left, C) * C);
        }
        for (int64_t i0 = i_first / kTileQ * kTileQ; i0 < q_len; i0 += kTileQ) {
          const int64_t bq = std::min(kTileQ, q_len - i0);
          const float *Qi = Q + q.at(b, h, i0), *dOi = dO + dout.at(b, h, i0);
          // P = exp(scale Q_i K_j^T - lse)   [bq, bk]
          tile_abt(small, bq, bk, D, scale, Qi, q.row, Kj, k.row, nullptr, 0, S);
          for (int64_t r = 0; r < bq; ++r) {
            float* p = S + r * kTileK;
            const Visible vis = visible(mask, b, i0 + r, j0, bk, Tk);
            const int64_t lo = vis.lo, n = vis.hi;
            const float lse_r = lse[bh * Tq + i0 + r];
            const int64_t w = round_up_lanes(bk);  // whole vectors, as in the forward
#pragma omp simd
            for (int64_t c = 0; c < w; ++c)
              p[c] = c >= lo && c < n ? vmath::exp(p[c] - lse_r) : 0.f;
          }
          // dV_j += P^T dO_i   [bk, D]
          tile_pb(small, true, bk, D, bq, 1.f, S, dOi, dout.row, dVj, dv.row);
          // dP = dO_i V_j^T   [bq, bk];  dS = P * (dP - Delta)
          tile_abt(small, bq, bk, D, 1.f, dOi, dout.row, Vj, v.row, nullptr, 0, dP);
          for (int64_t r = 0; r < bq; ++r) {
            const float* p = S + r * kTileK;
            float* ds = dP + r * kTileK;
            const float dr = delta[bh * Tq + i0 + r];
            for (int64_t c = 0; c < bk; ++c) ds[c] = p[c] * (ds[c] - dr);
          }
          // dQ_i += scale dS K_j   [bq, D]
          float* dQi = t == 0 ? dQ + dq.at(b, h, i0) : mine + ((bh - first_bh[t]) * Tq + i0) * D;
          tile_pb(small, false, bq, D, bk, scale, dP, Kj, k.row, dQi, t == 0 ? dq.row : D);
          // dK_j += scale dS^T Q_i   [bk, D]
          tile_pb(small, true, bk, D, bq, scale, dP, Qi, q.row, dKj, dk.row);
        }
      }
    }
  }
  for (int t = 1; t < nt; ++t) {
    if (!private_dq[t]) continue;
    for (int64_t n = 0; n < n_bh[t]; ++n) {
      const int64_t bh = first_bh[t] + n, b = bh / H, h = bh % H;
      for (int64_t i = 0, q_len = mask.query_length(b, Tq); i < q_len; ++i) {
        float* dst = dQ + dq.at(b, h, i);
        const float* src = private_dq[t] + (n * Tq + i) * D;
        for (int64_t d = 0; d < D; ++d) dst[d] += src[d];
      }
    }
  }
}

void attention_weights(const float* Q, const HeadsView& q, const float* K, const HeadsView& k,
                       float* W, const AttentionDims& dims, const AttentionMask& mask,
                       float scale) {
  // plain locals, not a structured binding: the lambdas capture them (clang < 16 cannot)
  const int64_t B = dims.B, H = dims.H, Tq = dims.Tq, Tk = dims.Tk, D = dims.D;
  parallel_for(B * H, grain_for(kSerialWork, Tq * Tk * D), [&](int64_t begin, int64_t end) {
    for (int64_t bh = begin; bh < end; ++bh) {
      const int64_t b = bh / H, h = bh % H, q_len = mask.query_length(b, Tq);
      float* w = W + bh * Tq * Tk;
      // only the rows that exist are read (packed operands end at their last entry's rows);
      // the other entries are 0
      const int64_t k_len = mask.key_length(b, Tk);
      std::fill(w + q_len * Tk, w + Tq * Tk, 0.f);
      if (q_len == 0 || k_len == 0) {
        std::fill(w, w + q_len * Tk, 0.f);
        continue;
      }
      gemm(false, true, q_len, k_len, D, scale, Q + q.at(b, h, 0), q.row, K + k.at(b, h, 0), k.row,
           0.f, w, Tk);
      for (int64_t i = 0; i < q_len; ++i) {
        float* row = w + i * Tk;
        const Visible vis = visible(mask, b, i, 0, Tk, Tk);
        const int64_t lo = vis.lo, n = vis.hi;
        std::fill(row, row + lo, 0.f);
        if (lo >= n) {
          std::fill(row, row + Tk, 0.f);
          continue;
        }
        const float mx = vmath::max(row + lo, n - lo, kNegInf);
        float sum = 0.f;
#pragma omp simd reduction(+ : sum)
        for (int64_t c = lo; c < n; ++c) {
          row[c] = vmath::exp(row[c] - mx);
          sum += row[c];
        }
        for (int64_t c = lo; c < n; ++c) row[c] /= sum;
        std::fill(row + n, row + Tk, 0.f);
      }
    }
  });
}

}  // namespace heed::kernels
