// bf16 products through oneDNN's matmul primitive; conversions vectorised over rows.
// Leaves out: a hand-written bf16 GEMM; oneDNN's brgemm kernels run at ~400 GFLOP/s a core here.
#include "heed/kernels/bf16.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <bit>
#include <unordered_map>
#include <vector>

#include "heed/kernels/flops.h"
#include "heed/kernels/gemm.h"
#include "heed/kernels/parallel.h"
#include "heed/util/error.h"

namespace heed::kernels {

float from_bf16(bf16 x) {
  return std::bit_cast<float>(static_cast<uint32_t>(x) << 16);
}

void to_bf16(const float* x, int64_t rows, int64_t cols, int64_t ldx, bf16* y) {
  parallel_for(rows, grain_for(kSerialWork, cols), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const float* xr = x + r * ldx;
      bf16* yr = y + r * cols;
#pragma omp simd
      for (int64_t c = 0; c < cols; ++c) yr[c] = to_bf16(xr[c]);
    }
  });
}

namespace {

const dnnl::engine& cpu_engine() {
  static const dnnl::engine engine = [] {
    // every (M, N, K, layout) a run meets stays compiled: a few thousand at most (kBf16Rows)
    dnnl::set_primitive_cache_capacity(8192);
    return dnnl::engine(dnnl::engine::kind::cpu, 0);
  }();
  return engine;
}

// One oneDNN matmul: C [M, N] (+)= op(A) op(B) (+ bias), shapes fixed at creation. Creating a
// primitive descriptor costs more than a recurrent step's whole product (~8 us a call here,
// against ~30 us for 64 x 256 x 256), so every thread keeps the primitives it has made, with
// their memory objects, by shape; a call then only points them at its operands.
struct MatmulKey {
  bool trans_a, trans_b, bias;
  int64_t M, N, K, lda, ldb, ldc;
  float beta;
  bool operator==(const MatmulKey&) const = default;
};
struct MatmulKeyHash {
  size_t operator()(const MatmulKey& k) const {
    size_t h = std::hash<float>()(k.beta) ^ (k.trans_a | k.trans_b << 1 | k.bias << 2);
    for (int64_t v : {k.M, k.N, k.K, k.lda, k.ldb, k.ldc})
      h = h * 0x9e3779b97f4a7c15ull + std::hash<int64_t>()(v);
    return h;
  }
};
struct MatmulEntry {
  dnnl::matmul primitive;
  dnnl::memory a, b, c, bias;
};

MatmulEntry make_matmul(const MatmulKey& k) {
  using dnnl::memory;
  using dt = memory::data_type;
  const dnnl::engine& eng = cpu_engine();
  // strides (row, column) of the logical [M, K] and [K, N] operands as stored
  const memory::desc a({k.M, k.K}, dt::bf16,
                       k.trans_a ? memory::dims{1, k.lda} : memory::dims{k.lda, 1});
  const memory::desc b({k.K, k.N}, dt::bf16,
                       k.trans_b ? memory::dims{1, k.ldb} : memory::dims{k.ldb, 1});
  const memory::desc c({k.M, k.N}, dt::f32, memory::dims{k.ldc, 1});
  const memory::desc bias_md({1, k.N}, dt::f32, memory::dims{k.N, 1});
  dnnl::primitive_attr attr;
  if (k.beta != 0.f) {
    dnnl::post_ops po;
    po.append_sum(k.beta);
    attr.set_post_ops(po);
  }
  const dnnl::matmul::primitive_desc pd(
      k.bias ? dnnl::matmul::desc(a, b, bias_md, c) : dnnl::matmul::desc(a, b, c), attr, eng);
  // the handles are set by every call before it executes
  return {dnnl::matmul(pd), memory(a, eng, DNNL_MEMORY_NONE), memory(b, eng, DNNL_MEMORY_NONE),
          memory(c, eng, DNNL_MEMORY_NONE),
          k.bias ? memory(bias_md, eng, DNNL_MEMORY_NONE) : memory()};
}

void matmul_block(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, const bf16* A,
                  int64_t lda, const bf16* B, int64_t ldb, float beta, float* C, int64_t ldc,
                  const float* bias) {
  // a few hundred shapes in a run (kBf16Rows keeps M's values few); a bound all the same
  constexpr size_t kMaxEntries = 4096;
  thread_local std::unordered_map<MatmulKey, MatmulEntry, MatmulKeyHash> made;
  thread_local dnnl::stream stream(cpu_engine());
  const MatmulKey key{trans_a, trans_b, bias != nullptr, M, N, K, lda, ldb, ldc, beta};
  auto it = made.find(key);
  if (it == made.end()) {
    if (made.size() >= kMaxEntries) made.clear();
    it = made.emplace(key, make_matmul(key)).first;
  }
  MatmulEntry& e = it->second;
  e.a.set_data_handle(const_cast<bf16*>(A));
  e.b.set_data_handle(const_cast<bf16*>(B));
  e.c.set_data_handle(C);
  if (bias) e.bias.set_data_handle(const_cast<float*>(bias));
  const dnnl_exec_arg_t args[] = {{DNNL_ARG_SRC, e.a.get()},
                                  {DNNL_ARG_WEIGHTS, e.b.get()},
                                  {DNNL_ARG_DST, e.c.get()},
                                  {DNNL_ARG_BIAS, bias ? e.bias.get() : nullptr}};
  const dnnl_status_t st =
      dnnl_primitive_execute(e.primitive.get(), stream.get(), bias ? 4 : 3, args);
  if (st != dnnl_success) throw dnnl::error(st, "dnnl_primitive_execute");
  stream.wait();
}

// Whether oneDNN has a bf16 matmul on this CPU at all: it has one from AVX512 up (emulated
// below AVX512_BF16), none on AVX2-only CPUs such as AMD Zen 3.
bool bf16_matmul_available() {
  static const bool available = [] {
    try {
      using dt = dnnl::memory::data_type;
      const dnnl::memory::desc a({1, 1}, dt::bf16, dnnl::memory::dims{1, 1});
      const dnnl::memory::desc c({1, 1}, dt::f32, dnnl::memory::dims{1, 1});
      const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a, a, c), cpu_engine());
      return true;
    } catch (const dnnl::error&) {
      return false;
    }
  }();
  return available;
}

// C [M, N] += bias [N] on every row
void add_bias(float* C, int64_t M, int64_t N, int64_t ldc, const float* bias) {
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) C[i * ldc + j] += bias[j];
}

// Without a bf16 matmul: the same product in fp32. A bf16 value is exactly a float and the
// product of two is exact in fp32, so only the order of the fp32 sums differs from oneDNN's.
// op(A) and op(B) are widened as stored ([M, K] or [K, M]; [K, N] or [N, K]).
void gemm_bf16_as_fp32(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, const bf16* A,
                       int64_t lda, const bf16* B, int64_t ldb, float beta, float* C, int64_t ldc,
                       const float* bias) {
  const auto widen = [](const bf16* x, int64_t rows, int64_t cols, int64_t ld,
                        std::vector<float>& out) {
    out.resize(static_cast<size_t>(rows * cols));
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) out[r * cols + c] = from_bf16(x[r * ld + c]);
  };
  thread_local std::vector<float> a, b;
  const int64_t a_rows = trans_a ? K : M, a_cols = trans_a ? M : K;
  const int64_t b_rows = trans_b ? N : K, b_cols = trans_b ? K : N;
  widen(A, a_rows, a_cols, lda, a);
  widen(B, b_rows, b_cols, ldb, b);
  gemm(trans_a, trans_b, M, N, K, 1.f, a.data(), a_cols, b.data(), b_cols, beta, C, ldc);
  if (bias) add_bias(C, M, N, ldc, bias);
}

}  // namespace

bool bf16_native() {
  static const bool native = [] {
    try {
      cpu_engine();
      // cpu_isa values are sets of feature bits (avx2_vnni's number exceeds avx512_core_bf16's)
      const auto isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
      const auto bf16 = static_cast<unsigned>(dnnl::cpu_isa::avx512_core_bf16);
      return (isa & bf16) == bf16;
    } catch (const dnnl::error&) {
      return false;
    }
  }();
  return native;
}

void gemm_bf16(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, const bf16* A,
               int64_t lda, const bf16* B, int64_t ldb, float beta, float* C, int64_t ldc,
               const float* bias) {
  if (M == 0 || N == 0) return;
  if (K == 0) {  // op(A) op(B) is a zero matrix: gemm() leaves beta C, then the bias
    gemm(trans_a, trans_b, M, N, 0, 1.f, nullptr, 1, nullptr, 1, beta, C, ldc);
    if (bias) add_bias(C, M, N, ldc, bias);
    return;
  }
  if (!bf16_matmul_available()) {  // gemm() counts the product
    gemm_bf16_as_fp32(trans_a, trans_b, M, N, K, A, lda, B, ldb, beta, C, ldc, bias);
    return;
  }
  count_product(M, N, K);
  const SerialScope small(M * N * K < kSerialWork);
  try {
    // rows [0, M0) in one block whose M is a multiple of kBf16Rows, the tail in another
    const int64_t M0 = M > kBf16Rows ? M / kBf16Rows * kBf16Rows : M;
    matmul_block(trans_a, trans_b, M0, N, K, A, lda, B, ldb, beta, C, ldc, bias);
    if (M0 < M) {
      const bf16* A1 = trans_a ? A + M0 : A + M0 * lda;
      matmul_block(trans_a, trans_b, M - M0, N, K, A1, lda, B, ldb, beta, C + M0 * ldc, ldc, bias);
    }
  } catch (const dnnl::error& e) {
    fail("oneDNN bf16 matmul failed (", e.what(), ") for M=", M, " N=", N, " K=", K);
  }
}

}  // namespace heed::kernels
