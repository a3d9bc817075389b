// int8 inference GEMM (see the header).
// Leaves out: saturation handling beyond [-127, 127] (symmetric scales never reach -128).
#include "heed/kernels/quantize.h"

#include <oneapi/dnnl/dnnl.h>

#if defined(__AVX512VNNI__) && defined(__AVX512BW__)
#include <immintrin.h>
#define HEED_INT8_PACKED 1
#if defined(__AMX_TILE__) && defined(__AMX_INT8__)
#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>
#define HEED_INT8_AMX 1
#endif
#endif

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <type_traits>

#include "heed/kernels/flops.h"
#include "heed/kernels/gemm.h"
#include "heed/kernels/parallel.h"
#include "heed/kernels/vmath.h"
#include "heed/util/error.h"
#include "with_count.h"

namespace heed::kernels {

namespace {

// One row: s = max|x| / 127, q = round(x / s), half away from zero (|y| <= 127.5 - ulp). Its own
// function, the sizes passed by value: inside parallel_for's lambda the int8 stores may alias
// the captured K and GCC leaves the loop scalar ("number of iterations cannot be computed").
float quantize_row(const float* r, int64_t K, int8_t* q) {
  const float amax = vmath::max_abs(r, K);
  const float s = amax > 0.f ? amax / 127.f : 1.f, inv = 1.f / s;
  for (int64_t k = 0; k < K; ++k) {
    const float y = r[k] * inv;
    q[k] = static_cast<int8_t>(static_cast<int32_t>(y + std::copysign(0.5f, y)));
  }
  return s;
}

}  // namespace

void quantize_rows(const float* x, int64_t M, int64_t K, int8_t* q, float* scale) {
  parallel_for(M, grain_for(kSerialWork, K), [&](int64_t b, int64_t e) {
    for (int64_t m = b; m < e; ++m) scale[m] = quantize_row(x + m * K, K, q + m * K);
  });
}

bool keep_int8_off_amx() {
  static const bool capped = [] {
    if (int8_packed_kernel()) return false;  // oneDNN's int8 GEMM is not called
    if (std::getenv("ONEDNN_MAX_CPU_ISA") || std::getenv("DNNL_MAX_CPU_ISA")) return false;
    return dnnl_set_max_cpu_isa(dnnl_cpu_isa_avx512_core_bf16) == dnnl_success;
  }();
  return capped;
}

bool int8_exact() {
  static const bool exact = [] {
    keep_int8_off_amx();  // the query below fixes oneDNN's ISA: the cap must come first
    // cpu_isa values are sets of feature bits: VNNI in its AVX512 or its AVX2 (VEX) form
    const auto isa = static_cast<unsigned>(dnnl_get_effective_cpu_isa());
    const auto has = [isa](dnnl_cpu_isa_t f) {
      return (isa & static_cast<unsigned>(f)) == static_cast<unsigned>(f);
    };
    return has(dnnl_cpu_isa_avx512_core_vnni) || has(dnnl_cpu_isa_avx2_vnni);
  }();
  return exact;
}

bool int8_packed_kernel() {
#ifdef HEED_INT8_PACKED
  return true;
#else
  return false;
#endif
}

namespace {

constexpr int64_t kGroupRows = 64;  // rows of one group of `packed`: four zmm of int32 sums
static_assert(kGroupRows == kInt8ColumnBlock);
constexpr int64_t kTileK4 = 16;   // words of four k in one AMX tile row (64 bytes)
constexpr int64_t kAmxRows = 32;  // rows of x per AMX block: two tiles of 16

// The words of four k of a row of `packed` and of x shifted: ceil(K / 4), rounded up to whole
// AMX tiles (the words past K are zero in W, so they add nothing)
int64_t padded_k4(int64_t K) {
  return ((K + 3) / 4 + kTileK4 - 1) / kTileK4 * kTileK4;
}

// packed[(g K4p + k4) 256 + 4 r + j] = q[(64 g + r) K + 4 k4 + j], zero beyond N and K;
// shift_out[n] = -128 sum_k q[n K + k]
void pack_for_vnni(Int8Matrix& m) {
  const int64_t N = m.rows, K = m.cols, K4 = padded_k4(K), G = (N + kGroupRows - 1) / kGroupRows;
  m.packed.assign(static_cast<size_t>(G * K4 * kGroupRows * 4), 0);
  m.shift_out.assign(static_cast<size_t>(G * kGroupRows), 0);
  for (int64_t n = 0; n < N; ++n) {
    const int64_t g = n / kGroupRows, r = n % kGroupRows;
    int32_t sum = 0;
    for (int64_t k = 0; k < K; ++k) {
      const int8_t v = m.q[n * K + k];
      m.packed[((g * K4 + k / 4) * kGroupRows + r) * 4 + k % 4] = v;
      sum += v;
    }
    m.shift_out[n] = -128 * sum;
  }
}

#ifdef HEED_INT8_PACKED
// 64 bytes of W in a register. Written as a plain load, GCC 12 folds it into each vpdpbusd that
// uses it when there are up to four (blocks of one to four rows of x), so such a block read W
// once a row from L1, two 64-byte loads a cycle for two vpdpbusd: load-bound, 159-166 GMAC/s
// over decoding's shapes on a Zen 5. Loaded once a step, the blocks of one to five rows run at
// ~265 there (a /tmp micro-benchmark cycling through the decoder's 25 int8 matrices with 3 MB
// of other reads between steps, 5-160 rows), ahead of oneDNN's u8s8s32 GEMM at every row count.
inline __m512i load_once(const int8_t* p) {
  __m512i r;
  asm("vmovdqu64 %1, %0" : "=v"(r) : "m"(*reinterpret_cast<const __m512i*>(p)));
  return r;
}

// One group of 64 rows of W against R rows of x (u, four bytes a word, K4 words a row): hands
// done(r, sums) the 64 int32 dot products of row r, those of W's rows 16 j .. 16 j + 15 in
// sums[j], the shift of x already out (the accumulators start from the group's shift_out). Each
// load of W serves all R rows (4 R accumulators, 4 registers of W, one broadcast of x: 25 of the 32
// at R = 5); with one row, two chains of accumulators (even and odd k4) hide vpdpbusd's latency.
// The loops over c, r and j are unrolled by pragma, early, so that the accumulators become 4 R
// values in registers: left to GCC 12's own unrolling, which comes after its scalarisation, `a`
// stayed an array on the stack and every k4 stored all 20 accumulators (int8 beam 5 at batch 1
// took 1.2x the old time).
constexpr int64_t kPrefetchBytes = 8 * kGroupRows * 4;  // W eight k4 steps ahead, into L1
constexpr int kMaxBlockRows = 5;  // rows of x a block (beam 5 at batch 1 is one block)

template <int R, bool kPrefetch, class Done>
void group_dots(const int8_t* wg, const int32_t* shift_out, const uint32_t* u, int64_t K4,
                const Done& done) {
  static_assert(R >= 1 && R <= kMaxBlockRows);
  constexpr int C = R == 1 ? 2 : 1;
  __m512i a[C][R][4] = {};  // zeros, but for the first chain's: the group's shift_out
#pragma GCC unroll 4
  for (int j = 0; j < 4; ++j) {
    const __m512i start = _mm512_loadu_si512(shift_out + 16 * j);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) a[0][r][j] = start;
  }
  const auto step = [&](int c, int64_t k4) {
    const int8_t* wk = wg + k4 * kGroupRows * 4;
    __m512i wv[4];
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
      if constexpr (kPrefetch)
        _mm_prefetch(reinterpret_cast<const char*>(wk + kPrefetchBytes + 64 * j), _MM_HINT_T0);
      wv[j] = load_once(wk + 64 * j);
    }
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m512i x4 = _mm512_set1_epi32(static_cast<int>(u[r * K4 + k4]));
#pragma GCC unroll 4
      for (int j = 0; j < 4; ++j) a[c][r][j] = _mm512_dpbusd_epi32(a[c][r][j], x4, wv[j]);
    }
  };
  int64_t k4 = 0;
  for (; k4 + C <= K4; k4 += C)
#pragma GCC unroll 2
    for (int c = 0; c < C; ++c) step(c, k4 + c);
  for (; k4 < K4; ++k4) step(0, k4);
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    if constexpr (C == 2)
      for (int j = 0; j < 4; ++j) a[0][r][j] = _mm512_add_epi32(a[0][r][j], a[1][r][j]);
    done(r, a[0][r][0], a[0][r][1], a[0][r][2], a[0][r][3]);
  }
}

#ifdef HEED_INT8_AMX
// AMX (Intel's tile matrix unit): TDPBUSD multiplies a tile of 16 rows x 64 unsigned bytes of x
// by a tile of 16 words x 16 columns of 4 signed bytes of W, summing in 16 x 16 int32 -- the
// VNNI arithmetic below, 16 rows and 16 columns at once. Used from kAmxMinRows rows of x (a beam
// of 5 over 32 sentences is 160): below that the rows padded to whole blocks of 32 cost more than
// the tiles save (one thread, Xeon family 6 model 167, N x K = 7859 x 256: VNNI 69 / 173 / 353 us
// at 5 / 16 / 31 rows, 180 GMAC/s; the tiles 196 / 393 / 1,033 us at 32 / 64 / 160 rows, 310-330
// GMAC/s, and 430-540 at N = 256-1024). The tiles read `packed` where it is: the 16 columns 16 j ..
// 16 j + 15 of a group at word k4 are 64 bytes at (k4 64 + 16 j) 4, one tile row, with a stride of
// 256 bytes.
constexpr int64_t kAmxMinRows = 20;

// Whether the CPU has AMX-INT8 and Linux lets this process use its tile registers (asked once:
// without the permission the first tile instruction is an illegal instruction).
bool amx_ready() {
  static const bool ready = [] {
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
    const bool tile = (d >> 24) & 1u, int8 = (d >> 25) & 1u;
    constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
    return tile && int8 && syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
  }();
  return ready;
}

// The tile configuration of amx_groups: tiles 0-3 the sums (16 rows x 16 int32), 4-5 two tiles
// of x (16 rows x 64 bytes), 6-7 two of W (16 words x 64 bytes).
struct alignas(64) TileConfig {
  uint8_t palette = 1, start_row = 0, reserved[14] = {};
  uint16_t colsb[16] = {64, 64, 64, 64, 64, 64, 64, 64};
  uint8_t rows[16] = {16, 16, 16, 16, 16, 16, 16, 16};
};

// Groups gb .. ge - 1 of W against the Mp rows of u (K4p words each), 32 rows and 32 columns at
// a time (four sum tiles), each row's 64 sums of a group handed to finish(g, m, sums) in order.
template <class Finish>
void amx_groups(int64_t gb, int64_t ge, int64_t Mp, int64_t K4p, const uint8_t* u,
                const int8_t* packed, const Finish& finish) {
  static const TileConfig config;
  _tile_loadconfig(&config);
  alignas(64) int32_t sums[kAmxRows][kGroupRows];
  const int64_t x_stride = K4p * 4, w_stride = kGroupRows * 4;  // bytes between tile rows
  for (int64_t g = gb; g < ge; ++g) {
    const int8_t* wg = packed + g * K4p * kGroupRows * 4;
    for (int64_t m0 = 0; m0 < Mp; m0 += kAmxRows) {
      const uint8_t* x0 = u + m0 * x_stride;
      for (int64_t half = 0; half < 2; ++half) {  // columns 32 half .. 32 half + 31
        _tile_zero(0);
        _tile_zero(1);
        _tile_zero(2);
        _tile_zero(3);
        for (int64_t k4 = 0; k4 < K4p; k4 += kTileK4) {
          _tile_loadd(4, x0 + k4 * 4, x_stride);                  // rows m0 .. m0 + 15
          _tile_loadd(5, x0 + 16 * x_stride + k4 * 4, x_stride);  // rows m0 + 16 .. m0 + 31
          const int8_t* wk = wg + (k4 * kGroupRows + 32 * half) * 4;
          _tile_loadd(6, wk, w_stride);           // 16 columns
          _tile_loadd(7, wk + 16 * 4, w_stride);  // the next 16
          _tile_dpbusd(0, 4, 6);
          _tile_dpbusd(1, 4, 7);
          _tile_dpbusd(2, 5, 6);
          _tile_dpbusd(3, 5, 7);
        }
        const int64_t c = 32 * half, row = kGroupRows * 4;  // bytes of a row of sums
        _tile_stored(0, &sums[0][c], row);
        _tile_stored(1, &sums[0][c + 16], row);
        _tile_stored(2, &sums[16][c], row);
        _tile_stored(3, &sums[16][c + 16], row);
      }
      for (int64_t r = 0; r < kAmxRows; ++r) finish(g, m0 + r, sums[r]);
    }
  }
  _tile_release();
}
#endif

// heed's int8 product (see int8_packed_kernel). vpdpbusd multiplies unsigned bytes by signed ones,
// four to a 32-bit lane, summing in int32 without saturation, so x goes in shifted, u = q(x) + 128
// in [1, 255], and the shift comes back out per row of W:
//   sum_k q(x)_k q(w)_nk = sum_k u_k q(w)_nk - 128 sum_k q(w)_nk      (exact: |sum| < 2^31)
// then y[m, n] = s_x[m] s_w[n] acc[m, n] (+ b[n]) (+ y[m, n]). One group of 64 rows of W
// (K bytes each, 16 KB at K = 256) stays in L1 while the rows of x pass over it in blocks of up
// to five (20 accumulators); the int32 sums never leave the registers until a row of 64 is
// finished (storing them as well cost 25-45 % at 32-160 rows of K = 128). Until 2026-12-02
// products of 12 rows or more went to oneDNN's u8s8s32 GEMM instead, which outran this loop while
// GCC folded its W loads into the vpdpbusd (see load_once); with them loaded once, this loop is
// ahead of oneDNN at every row count on a Zen 5 (int8 beam 5 over batches of 32: 0.92 of the time
// with oneDNN from 12 rows, the same outputs).

// One row of n outputs from their integer sums over the shifted row u = q(x) + 128, the shift
// taken out here (kShifted: shift_out added) or already (the accumulators started from it):
//   y = fma(s_x s_w, acc - 128 sum_k q(w), b) (+ y when accumulating),
// rounded as gemm_int8's other paths round it, so that a row's output does not depend on which
// path made it, which depends on how many rows came with it (the batch).
// (The maskz forms: GCC 12 warns that the plain ones' undefined register may be used.)
template <bool kShifted>
void finish_row(const int32_t* __restrict acc, int64_t n, float sx,
                const int32_t* __restrict shift_out, const float* __restrict sw,
                const float* __restrict bias, float* __restrict y, bool accumulate) {
  const __m512 s = _mm512_set1_ps(sx);
  // 16 outputs j.. under mask k; whole vectors are loaded and stored unmasked (Zen 5: int8 beam
  // search over batches of 32, whose finishing is 8-14 % of its time, 0.94 of the masked time)
  const auto finish16 = [&](int64_t j, __mmask16 k, bool whole) {
    __m512i a = whole ? _mm512_loadu_si512(acc + j) : _mm512_maskz_loadu_epi32(k, acc + j);
    if constexpr (kShifted)
      a = _mm512_add_epi32(a, whole ? _mm512_loadu_si512(shift_out + j)
                                    : _mm512_maskz_loadu_epi32(k, shift_out + j));
    const __m512 w = whole ? _mm512_loadu_ps(sw + j) : _mm512_maskz_loadu_ps(k, sw + j);
    const __m512 b = !bias   ? _mm512_setzero_ps()
                     : whole ? _mm512_loadu_ps(bias + j)
                             : _mm512_maskz_loadu_ps(k, bias + j);
    __m512 v = _mm512_fmadd_ps(_mm512_mul_ps(s, w), _mm512_maskz_cvtepi32_ps(k, a), b);
    if (accumulate)
      v = _mm512_add_ps(v, whole ? _mm512_loadu_ps(y + j) : _mm512_maskz_loadu_ps(k, y + j));
    if (whole)
      _mm512_storeu_ps(y + j, v);
    else
      _mm512_mask_storeu_ps(y + j, k, v);
  };
  int64_t j = 0;
  for (; j + 16 <= n; j += 16) finish16(j, __mmask16(0xffff), true);
  if (j < n) finish16(j, __mmask16((1u << (n - j)) - 1), false);
}

// W's rows c0 .. c0 + C - 1 (c0 a multiple of 64): y [M, C], rows ldy apart.
void gemm_int8_packed(int64_t M, const int8_t* qx, const float* sx, const Int8Matrix& w, int64_t c0,
                      int64_t C, const float* bias, float* y, int64_t ldy, bool accumulate) {
  const int64_t K = w.cols, g0 = c0 / kGroupRows, G = (c0 + C + kGroupRows - 1) / kGroupRows;
  const int64_t K4p = padded_k4(K);
#ifdef HEED_INT8_AMX
  const bool tiles = M >= kAmxMinRows && amx_ready();
#else
  const bool tiles = false;
#endif
  // u [Mp, K4]: four bytes of u a word, 128 beyond K (q = 0); the tiles read whole words of
  // 16 and blocks of 32 rows, so their rows are K4p words and Mp = M rounded up to 32
  const int64_t K4 = tiles ? K4p : (K + 3) / 4;
  const int64_t Mp = tiles ? (M + kAmxRows - 1) / kAmxRows * kAmxRows : M;
  thread_local std::vector<uint32_t> shifted;
  shifted.assign(static_cast<size_t>(Mp * K4), 0x80808080u);
  auto* u8 = reinterpret_cast<uint8_t*>(shifted.data());
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));  // q + 128 = q ^ 0x80
  for (int64_t m = 0; m < M; ++m)
    for (int64_t k = 0; k < K; k += 64) {
      const __mmask64 in = K - k >= 64 ? ~__mmask64{0} : (__mmask64{1} << (K - k)) - 1;
      _mm512_mask_storeu_epi8(u8 + m * K4 * 4 + k, in,
                              _mm512_xor_si512(_mm512_maskz_loadu_epi8(in, qx + m * K + k), flip));
    }
  const uint32_t* u = shifted.data();
  const int8_t* packed = w.packed.data();
  const int32_t* shift_out = w.shift_out.data();
  const float* sw = w.scale.data();
  // row m of the output for W's rows 64 g .. 64 g + 63, from its 64 integer sums (kShifted: the
  // shift of x still in them)
  const auto finish = [&](auto shifted, int64_t g, int64_t m, const int32_t* sums) {
    const int64_t n0 = g * kGroupRows;
    finish_row<decltype(shifted)::value>(sums, std::min(kGroupRows, c0 + C - n0), sx[m],
                                         shift_out + n0, sw + n0, bias ? bias + n0 : nullptr,
                                         y + m * ldy + (n0 - c0), accumulate);
  };
#ifdef HEED_INT8_AMX
  if (tiles) {
    parallel_for(G - g0, grain_for(16 * kSerialWork, Mp * kGroupRows * K),
                 [&](int64_t gb, int64_t ge) {
                   amx_groups(g0 + gb, g0 + ge, Mp, K4p, u8, packed,
                              [&](int64_t g, int64_t m, const int32_t* sums) {
                                if (m >= M) return;  // a padding row
                                finish(std::true_type{}, g, m, sums);
                              });
                 });
    return;
  }
#endif
  // the rows of x in blocks of as near kMaxBlockRows as divide them evenly (32 rows: four of 5
  // and three of 4, not six of 5 and one of 2, whose W loads serve two rows)
  const int64_t blocks = (M + kMaxBlockRows - 1) / kMaxBlockRows;
  parallel_for(G - g0, grain_for(4 * kSerialWork, M * kGroupRows * K), [&](int64_t gb, int64_t ge) {
    for (int64_t g = g0 + gb; g < g0 + ge; ++g) {
      const int8_t* wg = packed + g * K4p * kGroupRows * 4;
      for (int64_t b = 0, m = 0; b < blocks; ++b) {
        const int64_t rows = (M - m) / (blocks - b);  // the first blocks take a row more
        const int64_t R = (M - m) % (blocks - b) != 0 ? rows + 1 : rows;
        with_count<kMaxBlockRows>(R, [&](auto rows_c) {
          constexpr int kRows = decltype(rows_c)::value;
          const auto done = [&](int r, __m512i s0, __m512i s1, __m512i s2, __m512i s3) {
            alignas(64) int32_t sums[kGroupRows];
            _mm512_store_si512(sums, s0);
            _mm512_store_si512(sums + 16, s1);
            _mm512_store_si512(sums + 32, s2);
            _mm512_store_si512(sums + 48, s3);
            finish(std::false_type{}, g, m + r, sums);
          };
          // the first block brings the group into L1; the blocks after it find it there
          if (b == 0)
            group_dots<kRows, true>(wg, shift_out + g * kGroupRows, u + m * K4, K4, done);
          else
            group_dots<kRows, false>(wg, shift_out + g * kGroupRows, u + m * K4, K4, done);
        });
        m += R;
      }
    }
  });
}
#endif

}  // namespace

Int8Matrix quantize_matrix(const float* w, int64_t N, int64_t K) {
  Int8Matrix m{N,
               K,
               std::vector<int8_t>(static_cast<size_t>(N * K)),
               std::vector<float>(static_cast<size_t>(N)),
               {},
               {},
               {}};
  quantize_rows(w, N, K, m.q.data(), m.scale.data());
  if (!int8_exact()) m.q_float.assign(m.q.begin(), m.q.end());
  if (int8_packed_kernel()) pack_for_vnni(m);
  return m;
}

void gemm_int8(int64_t M, const int8_t* qx, const float* sx, const Int8Matrix& w, const float* bias,
               int32_t* acc, float* y, bool accumulate) {
  gemm_int8_columns(M, qx, sx, w, 0, w.rows, bias, acc, y, w.rows, accumulate);
}

void gemm_int8_columns(int64_t M, const int8_t* qx, const float* sx, const Int8Matrix& w,
                       int64_t c0, int64_t C, const float* bias, int32_t* acc, float* y,
                       int64_t ldy, bool accumulate) {
  const int64_t K = w.cols;
  check(c0 >= 0 && C >= 0 && c0 + C <= w.rows && c0 % kInt8ColumnBlock == 0 && ldy >= C,
        "gemm_int8: columns ", c0, "..", c0 + C, " of ", w.rows, " (from a multiple of ",
        kInt8ColumnBlock, "), rows ", ldy, " apart");
  if (M == 0 || C == 0) return;
#ifdef HEED_INT8_PACKED
  if (!w.packed.empty()) {
    count_product(M, C, K);
    gemm_int8_packed(M, qx, sx, w, c0, C, bias, y, ldy, accumulate);
    return;
  }
#endif
  const SerialScope small(M * C * K < 4 * kSerialWork);  // int8 does 4x the MACs per cycle
  if (!w.q_float.empty()) {
    // no VNNI: q(x) q(w)^T as an fp32 GEMM on the integer values, every product exact and every
    // sum exact while it stays below 2^24 (K <= 1040), then rounded into acc
    thread_local std::vector<float> xf, accf;
    xf.assign(qx, qx + M * K);
    accf.resize(static_cast<size_t>(M * C));
    float* sums = accf.data();  // (the workers below have thread_locals of their own)
    gemm(false, true, M, C, K, 1.f, xf.data(), K, w.q_float.data() + c0 * K, K, 0.f, sums, C);
    parallel_for(M, 8, [&](int64_t b, int64_t e) {
      for (int64_t i = b * C; i < e * C; ++i) acc[i] = static_cast<int32_t>(std::lrint(sums[i]));
    });
  } else {
    const int32_t zero = 0;  // no offsets: acc = q(x) q(w)^T exactly, in int32
    count_product(M, C, K);
    dnnl_status_t st = dnnl_gemm_s8s8s32('N', 'T', 'F', M, C, K, 1.f, qx, K, 0, w.q.data() + c0 * K,
                                         K, 0, 0.f, acc, C, &zero);
    check(st == dnnl_success, "dnnl_gemm_s8s8s32 failed (status ", static_cast<int>(st),
          ") for M=", M, " N=", C, " K=", K);
  }
  const float* sw = w.scale.data() + c0;
  const float* b0 = bias ? bias + c0 : nullptr;
  parallel_for(M, 8, [&](int64_t b, int64_t e) {
    for (int64_t m = b; m < e; ++m) {
      const int32_t* a = acc + m * C;
      float* out = y + m * ldy;
      const float s = sx[m];
      for (int64_t n = 0; n < C; ++n) {  // heed's kernel's rounding exactly (see there)
        const float v = std::fma(s * sw[n], static_cast<float>(a[n]), b0 ? b0[n] : 0.f);
        out[n] = accumulate ? out[n] + v : v;
      }
    }
  });
}

}  // namespace heed::kernels
