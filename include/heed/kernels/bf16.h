// bfloat16 products for mixed-precision training (Kalamkar et al. 2019, "A Study of BFLOAT16 for
// Deep Learning Training"; Micikevicius et al. 2018 for the fp32 master weights): the operands of
// a product are rounded to bf16 (fp32's 8 exponent bits, 7 mantissa bits), the products are
// exact in fp32 and summed in fp32, and everything else (weights, optimizer state, element-wise
// ops, softmax, losses) stays fp32. On a CPU with AVX512_BF16 (VDPBF16PS) oneDNN's bf16 matmul
// does twice the multiply-adds of fp32 FMAs per instruction; from AVX512 up without it oneDNN
// emulates them, and on AVX2-only CPUs (AMD Zen 3, say), where oneDNN has no bf16 matmul, the
// same products run as fp32 GEMMs on the widened operands (the same values up to the order of
// the sums; slower than fp32, as `heed train` warns).
// Leaves out: bf16 storage of activations or weights (only the GEMM operands are bf16), fp16,
// and loss scaling (bf16 has fp32's exponent range, so gradients do not underflow).
#pragma once

#include <bit>
#include <cstdint>

namespace heed::kernels {

using bf16 = uint16_t;  // the upper half of an IEEE fp32, as stored

// Round to nearest, ties to even (NaN stays NaN). Inline, so that loops over it vectorise.
inline bf16 to_bf16(float x) {
  const auto u = std::bit_cast<uint32_t>(x);
  // ties to even: add 0x7fff, plus 1 when the kept part is odd
  const uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
  // NaN: keep sign and exponent, force a quiet mantissa bit (rounding could make it inf).
  // A select, not a branch, so that loops over it vectorise.
  const uint32_t nan = (u >> 16) | 0x40u;
  return static_cast<bf16>((u & 0x7fffffffu) > 0x7f800000u ? nan : rounded);
}
float from_bf16(bf16 x);
// y [rows, cols] (packed) = bf16(x [rows, cols] with row stride ldx); parallel over large arrays
void to_bf16(const float* x, int64_t rows, int64_t cols, int64_t ldx, bf16* y);

// Token counts vary from batch to batch; operands padded with zero rows to a multiple of this
// (and gemm_bf16's split of M) keep the number of distinct GEMM shapes, each compiled once, small.
inline constexpr int64_t kBf16Rows = 64;
inline int64_t bf16_padded_rows(int64_t rows) {
  return (rows + kBf16Rows - 1) / kBf16Rows * kBf16Rows;
}

// Whether this CPU runs bf16 products natively (oneDNN dispatches avx512_core_bf16 or newer).
bool bf16_native();

// Row-major C[M,N] = op(A) op(B) (+ bias[N]) + beta C in fp32, op(X) = X or X^T, A and B bf16
// with row strides lda / ldb as stored. Through oneDNN's matmul primitive, made once per shape
// and thread and kept; M is split into a multiple of kBf16Rows and a tail.
void gemm_bf16(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, const bf16* A,
               int64_t lda, const bf16* B, int64_t ldb, float beta, float* C, int64_t ldc,
               const float* bias = nullptr);

}  // namespace heed::kernels
