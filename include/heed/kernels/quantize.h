// int8 inference GEMM (as CTranslate2's and Marian's int8 CPU decoding): weights are quantized
// once per output row, activations per input row, both symmetric,
//   q(x)_k = round(x_k / s),  s = max_k |x_k| / 127,
// the product runs on oneDNN's s8s8s32 GEMM (VNNI dot products: four times the multiply-adds
// of an fp32 FMA per instruction, and a quarter of the weight bytes for batch-1 decoding), and
//   y[m,n] = s_x[m] * s_w[n] * sum_k q(x)[m,k] q(w)[n,k] + b[n].
// Without VNNI (AMD Zen 3, Intel before Cascade Lake) oneDNN's s8s8 GEMM goes through
// vpmaddubsw, whose int16 pair sums saturate and give wrong products; there the integer
// product runs as an fp32 GEMM on the quantized values instead (the same numbers, no speed-up).
// Leaves out: training in int8 (inference only) and activation zero points (symmetric only).
#pragma once

#include <cstdint>
#include <vector>

namespace heed::kernels {

// A [N, K] weight matrix, each row quantized with its own scale.
struct Int8Matrix {
  int64_t rows = 0, cols = 0;  // N, K
  std::vector<int8_t> q;       // [N, K]
  std::vector<float> scale;    // [N]
  std::vector<float> q_float;  // [N, K] q as floats, on CPUs without VNNI (int8_exact() false)
  // For heed's own kernel, when heed is built for AVX512-VNNI: q in groups of 64 rows, each
  // group's k in fours, [ceil(N/64)][K4p][64][4] with K4p = ceil(K/4) rounded up to 16 (whole
  // AMX tiles), zero-padded; and -128 times each row's sum of q, zero-padded to whole groups
  // [ceil(N/64) 64] (the shift of x taken back out, see gemm_int8).
  std::vector<int8_t> packed;
  std::vector<int32_t> shift_out;
};

// Whether this build has heed's own int8 kernel (compiled for AVX512-VNNI and AVX512BW). Then
// every gemm_int8 runs on it and never calls oneDNN: against oneDNN 2.6's s8s8s32 GEMM on
// AVX512-VNNI it is 1.5-3.8x faster at 1-8 rows (1 x 768 x 256: 3.0 against 4.5 us; the
// library's per-call cost is several times the arithmetic's there), and with its weights loaded
// once a step (2026-12-02) it is ahead of oneDNN's u8s8s32 GEMM at 12-160 rows too (a Zen 5, the
// decoder's shapes in place: ~265 against 100-220 GMAC/s), where it had called oneDNN for its
// integer sums. Where the CPU has AMX-INT8 (and heed is built for it), heed's kernel runs 20
// rows or more through AMX tiles of its own, on the same packed weights: oneDNN's AMX kernels,
// which it picks where the CPU has AMX, are 2-10x slower than it at decoding's shapes. The sums
// are exact and rounded alike on every path. Otherwise gemm_int8 calls oneDNN.
bool int8_packed_kernel();

// Keeps oneDNN off its AMX kernels in a process that decodes in int8 through oneDNN (a build
// without heed's own kernel, see above): on a Xeon with AMX, oneDNN 2.6 runs s8s8s32 GEMMs of
// decoding's shapes through them 3-4x slower than through its AVX512-VNNI ones (1 x 768 x 256:
// 17.6 us against 4.5-5.8; 64 rows: 198 against 54-65). The cap (AVX512_BF16: bf16 products
// keep their non-AMX kernels) is process-wide and takes effect only before oneDNN's first
// kernel or ISA query: int8_exact() applies it before its own query, and every int8 path
// (quantizing weights, heed translate's check) asks int8_exact() first; heed bench, whose
// machine probes run kernels before any int8 work, calls it itself. A no-op with heed's own
// kernel (so a process that decodes in int8 keeps AMX for bf16 training), on CPUs without AMX
// and when ONEDNN_MAX_CPU_ISA is set. Returns whether the cap is in force.
bool keep_int8_off_amx();

// Whether oneDNN's s8s8s32 GEMM is exact here (VNNI); otherwise gemm_int8 uses q_float.
bool int8_exact();

// linear() takes the int8 path for weights with at least this many output rows.
inline constexpr int64_t kInt8MinOutputs = 64;

// Symmetric per-row quantization of x [M, K] into q [M, K] and scale [M]; an all-zero row gets
// scale 1 and zeros.
void quantize_rows(const float* x, int64_t M, int64_t K, int8_t* q, float* scale);
Int8Matrix quantize_matrix(const float* w, int64_t N, int64_t K);

// y [M, N] = dequant(q(x) [M, K] q(w)^T [K, N]) (+ bias [N] when given; added to y's
// contents when `accumulate`). `acc` is scratch of M*N int32 for the oneDNN and fp32 paths
// (holding the exact integer sums afterwards, or for heed's kernel from 12 rows the sums of the
// shifted rows; below that it keeps them in registers).
void gemm_int8(int64_t M, const int8_t* qx, const float* sx, const Int8Matrix& w, const float* bias,
               int32_t* acc, float* y, bool accumulate = false);
// The columns c0 .. c0 + C - 1 of that product (W's rows; c0 a multiple of kInt8ColumnBlock)
// into y [M, C], rows ldy apart (bias: all N of it, read from c0); acc: scratch of M*C. The
// same floats as gemm_int8's columns.
inline constexpr int64_t kInt8ColumnBlock = 64;  // W's packed groups
void gemm_int8_columns(int64_t M, const int8_t* qx, const float* sx, const Int8Matrix& w,
                       int64_t c0, int64_t C, const float* bias, int32_t* acc, float* y,
                       int64_t ldy, bool accumulate = false);

}  // namespace heed::kernels
