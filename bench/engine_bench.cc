// Google Benchmark suite of the engine (`make bench`; OMP_NUM_THREADS=N sets the threads):
//   - GEMM: raw dnnl_sgemm against a matmul through the graph (node, arena, closure) at the
//     shapes the models use, forward and forward+backward, in GFLOP/s;
//   - a fused GRU step forward+backward against the same step composed of basic ops;
//   - element-wise ops in GB/s, in cache and from DRAM, next to memcpy as the reference;
//   - a vocabulary row's maximum, argmax and top 5 (softmax, cross-entropy, greedy and beam
//     search) against the std:: algorithms they replace, and the cross-entropy forward.
#include <benchmark/benchmark.h>
#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <numeric>
#include <vector>

#include "heed/autograd/ops.h"
#include "heed/kernels/bf16.h"
#include "heed/kernels/elementwise.h"
#include "heed/kernels/random.h"
#include "heed/kernels/reduce.h"
#include "heed/kernels/softmax.h"
#include "heed/kernels/vmath.h"

namespace heed {
namespace {

Tensor random(const Shape& s, uint64_t seed) {
  Rng rng(seed);
  Tensor t = Tensor::empty(s);
  for (auto& v : t.span()) v = rng.uniform(-1.f, 1.f);
  return t;
}

// The first steps of a graph grow its arena and fault its pages in; a training run sees the
// steady state after them, so every benchmark runs its step twice before timing.
template <class F>
void warm_up(F&& step) {
  step();
  step();
}

void gemm_args(benchmark::internal::Benchmark* b) {
  // {M, N, K}: decoder step output layer at batch 64, a GRU gate GEMM, the output layer over a
  // whole batch of target tokens, and a Transformer feed-forward.
  for (auto s : std::vector<std::vector<int64_t>>{{64, 1536, 512},
                                                  {128, 768, 256},
                                                  {1664, 1536, 512},
                                                  {1664, 6000, 512},
                                                  {1024, 512, 256}})
    b->Args(s);
  b->Unit(benchmark::kMicrosecond)->UseRealTime();
}

void set_flops(benchmark::State& st, double flops_per_iter) {
  st.counters["GFLOP/s"] = benchmark::Counter(
      flops_per_iter * static_cast<double>(st.iterations()) / 1e9, benchmark::Counter::kIsRate);
}

// C [M, N] = X [M, K] W^T, W [N, K]: the linear-layer layout.
void BM_RawSgemm(benchmark::State& st) {
  const int64_t M = st.range(0), N = st.range(1), K = st.range(2);
  Tensor x = random({M, K}, 1), w = random({N, K}, 2), c = Tensor::empty({M, N});
  auto step = [&] {
    dnnl_sgemm('N', 'T', M, N, K, 1.f, x.data(), K, w.data(), K, 0.f, c.data(), N);
    benchmark::DoNotOptimize(c.data());
  };
  warm_up(step);
  for (auto _ : st) step();
  set_flops(st, 2.0 * M * N * K);
}
BENCHMARK(BM_RawSgemm)->Apply(gemm_args);

void BM_EngineMatmul(benchmark::State& st) {
  const int64_t M = st.range(0), N = st.range(1), K = st.range(2);
  Tensor x = random({M, K}, 1), w = random({N, K}, 2);
  Graph g(Mode::Inference);
  auto step = [&] {
    Var y = matmul(g.constant(x), g.constant(w), {.trans_b = true});
    benchmark::DoNotOptimize(y.value().data());
    g.clear();
  };
  warm_up(step);
  for (auto _ : st) step();
  set_flops(st, 2.0 * M * N * K);
}
BENCHMARK(BM_EngineMatmul)->Apply(gemm_args);

// Forward + backward: three GEMMs raw (C = X W^T, dX = dC W, dW = dC^T X) ...
void BM_RawSgemmTrain(benchmark::State& st) {
  const int64_t M = st.range(0), N = st.range(1), K = st.range(2);
  Tensor x = random({M, K}, 1), w = random({N, K}, 2), c = Tensor::empty({M, N});
  Tensor dc = random({M, N}, 3), dx = Tensor::zeros({M, K}), dw = Tensor::zeros({N, K});
  auto step = [&] {
    dnnl_sgemm('N', 'T', M, N, K, 1.f, x.data(), K, w.data(), K, 0.f, c.data(), N);
    dnnl_sgemm('N', 'N', M, K, N, 1.f, dc.data(), N, w.data(), K, 1.f, dx.data(), K);
    dnnl_sgemm('T', 'N', N, K, M, 1.f, dc.data(), N, x.data(), K, 1.f, dw.data(), K);
    benchmark::DoNotOptimize(dw.data());
  };
  warm_up(step);
  for (auto _ : st) step();
  set_flops(st, 6.0 * M * N * K);
}
BENCHMARK(BM_RawSgemmTrain)->Apply(gemm_args);

// ... and the same through the graph: linear() forward, backward from a seeded gradient.
void BM_EngineMatmulTrain(benchmark::State& st) {
  const int64_t M = st.range(0), N = st.range(1), K = st.range(2);
  ParameterStore store;
  Parameter& w = store.add("w", {N, K});
  w.value.copy_from(random({N, K}, 2));
  Tensor x = random({M, K}, 1), dc = random({M, N}, 3);
  Graph g;
  auto step = [&] {
    Var y = linear(g.variable(x), g.param(w));  // C = X W^T
    g.backward(y, dc);                          // dX = dC W,  dW += dC^T X
    benchmark::DoNotOptimize(w.grad.data());
    g.clear();
  };
  warm_up(step);
  for (auto _ : st) step();
  set_flops(st, 6.0 * M * N * K);
}
BENCHMARK(BM_EngineMatmulTrain)->Apply(gemm_args);

// One bf16 product through gemm_bf16 (oneDNN's matmul), C [M, N] = X [M, K] W^T: at the
// recurrent steps' sizes the call's own cost (descriptors, primitive lookup, arguments) is a
// visible part of the time, so the small shapes come first.
void BM_Bf16Matmul(benchmark::State& st) {
  const int64_t M = st.range(0), N = st.range(1), K = st.range(2);
  if (!kernels::bf16_native()) {
    st.SkipWithError("no native bf16 on this CPU");
    return;
  }
  std::vector<kernels::bf16> x(static_cast<size_t>(M * K)), w(static_cast<size_t>(N * K));
  Tensor xf = random({M, K}, 1), wf = random({N, K}, 2), c = Tensor::empty({M, N});
  kernels::to_bf16(xf.data(), M, K, K, x.data());
  kernels::to_bf16(wf.data(), N, K, K, w.data());
  auto step = [&] {
    kernels::gemm_bf16(false, true, M, N, K, x.data(), K, w.data(), K, 0.f, c.data(), N);
    benchmark::DoNotOptimize(c.data());
  };
  warm_up(step);
  for (auto _ : st) step();
  set_flops(st, 2.0 * M * N * K);
}
BENCHMARK(BM_Bf16Matmul)
    ->Args({64, 768, 256})
    ->Args({64, 256, 256})
    ->Args({64, 70, 512})
    ->Args({8, 64, 64})
    ->Args({1280, 768, 64})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

// A GRU step, B = 64 and 128, H = 512: forward + backward of the fused cell ...
void gru_args(benchmark::internal::Benchmark* b) {
  b->Args({64, 512})
      ->Args({128, 512})
      ->Args({128, 256})
      ->Unit(benchmark::kMicrosecond)
      ->UseRealTime();
}

template <bool Fused>
void BM_GruStep(benchmark::State& st) {
  const int64_t B = st.range(0), H = st.range(1);
  ParameterStore store;
  Parameter& U = store.add("U", {3 * H, H});
  Parameter& bh = store.add("bh", {3 * H});
  U.value.copy_from(random({3 * H, H}, 4));
  Tensor gx = random({B, 3 * H}, 5), h0 = random({B, H}, 6), w = random({B, H}, 7);
  Graph g;
  auto step = [&] {
    Var x = g.variable(gx), h = g.variable(h0), u = g.param(U), b = g.param(bh);
    Var out;
    if constexpr (Fused) {
      out = gru_cell(x, h, u, b);
    } else {  // ... against the same step composed of basic ops
      Var gh = linear(h, u, b);
      Var r = sigmoid(slice(x, 1, 0, H) + slice(gh, 1, 0, H));
      Var z = sigmoid(slice(x, 1, H, H) + slice(gh, 1, H, H));
      Var n = tanh(slice(x, 1, 2 * H, H) + r * slice(gh, 1, 2 * H, H));
      out = (1.f - z) * n + z * h;
    }
    g.backward(sum_all(out * g.constant(w)));
    benchmark::DoNotOptimize(U.grad.data());
    g.clear();
  };
  warm_up(step);
  for (auto _ : st) step();
  st.SetItemsProcessed(st.iterations() * B);
  // 3 GEMMs of 2 * B * 3H * H flops each (forward, dU, dh)
  set_flops(st, 3 * 2.0 * B * 3 * H * H);
}
BENCHMARK(BM_GruStep<true>)->Name("BM_GruStepFused")->Apply(gru_args);
BENCHMARK(BM_GruStep<false>)->Name("BM_GruStepComposed")->Apply(gru_args);

// Element-wise throughput, in GB/s of bytes read + written, at two sizes: 1M floats (4 MiB, in
// cache) and 256M floats (1 GiB, far beyond the 0.5 GiB L3: DRAM bandwidth), next to memcpy.
Tensor ramp(int64_t n, float offset) {  // cheap deterministic fill for large tensors
  Tensor t = Tensor::empty({n});
  for (int64_t i = 0; i < n; ++i) t.data()[i] = static_cast<float>(i % 1999) * 1e-3f - offset;
  return t;
}

void eltwise_args(benchmark::internal::Benchmark* b) {
  b->Arg(int64_t{1} << 20)->Arg(int64_t{1} << 28)->Unit(benchmark::kMillisecond)->UseRealTime();
}

void BM_Memcpy(benchmark::State& st) {
  const int64_t n = st.range(0);
  Tensor a = ramp(n, 1.f), b = Tensor::zeros({n});
  for (auto _ : st) {
    std::memcpy(b.data(), a.data(), n * sizeof(float));
    benchmark::DoNotOptimize(b.data());
  }
  st.SetBytesProcessed(st.iterations() * 2 * n * 4);  // read + write
}
BENCHMARK(BM_Memcpy)->Apply(eltwise_args);

template <kernels::Unary Op>
void BM_Unary(benchmark::State& st) {
  const int64_t n = st.range(0);
  Tensor a = ramp(n, 1.f), b = Tensor::zeros({n});
  for (auto _ : st) {
    kernels::unary_forward(Op, a.data(), b.data(), n);
    benchmark::DoNotOptimize(b.data());
  }
  st.SetBytesProcessed(st.iterations() * 2 * n * 4);
}
BENCHMARK(BM_Unary<kernels::Unary::Tanh>)->Name("BM_Tanh")->Apply(eltwise_args);
BENCHMARK(BM_Unary<kernels::Unary::Sigmoid>)->Name("BM_Sigmoid")->Apply(eltwise_args);
BENCHMARK(BM_Unary<kernels::Unary::Exp>)->Name("BM_Exp")->Apply(eltwise_args);
BENCHMARK(BM_Unary<kernels::Unary::Relu>)->Name("BM_Relu")->Apply(eltwise_args);

void BM_AddBroadcastBias(benchmark::State& st) {
  const int64_t n = st.range(0), D = 512, R = n / D;
  Tensor a = ramp(n, 1.f).reshape({R, D}), b = ramp(D, 0.5f), c = Tensor::zeros({R, D});
  for (auto _ : st) {
    kernels::binary(kernels::Binary::Add, a.data(), a.shape(), b.data(), b.shape(), c.data(),
                    c.shape());
    benchmark::DoNotOptimize(c.data());
  }
  st.SetBytesProcessed(st.iterations() * 2 * n * 4);
}
BENCHMARK(BM_AddBroadcastBias)->Apply(eltwise_args);

void BM_Mul(benchmark::State& st) {
  const int64_t n = st.range(0);
  Tensor a = ramp(n, 1.f), b = ramp(n, 0.5f), c = Tensor::zeros({n});
  for (auto _ : st) {
    kernels::binary(kernels::Binary::Mul, a.data(), a.shape(), b.data(), b.shape(), c.data(),
                    c.shape());
    benchmark::DoNotOptimize(c.data());
  }
  st.SetBytesProcessed(st.iterations() * 3 * n * 4);
}
BENCHMARK(BM_Mul)->Apply(eltwise_args);

// Rows of a vocabulary (6,000: the peer's target side; 10,000: the Multi30k joint pieces), as
// logits in [-1, 1]; in rows/s. Each vectorised kernel is timed next to the std:: code it
// replaced, in the same run.
void row_args(benchmark::internal::Benchmark* b) {
  b->Arg(6000)->Arg(10000);
}

void BM_RowMaxStd(benchmark::State& st) {
  Tensor x = random({st.range(0)}, 7);
  float m = 0;
  for (auto _ : st) {
    m = -std::numeric_limits<float>::infinity();
    for (float v : x.span()) m = std::max(m, v);
    benchmark::DoNotOptimize(m);
  }
  st.SetItemsProcessed(st.iterations());
}
BENCHMARK(BM_RowMaxStd)->Apply(row_args);

void BM_RowMax(benchmark::State& st) {
  Tensor x = random({st.range(0)}, 7);
  for (auto _ : st)
    benchmark::DoNotOptimize(
        vmath::max(x.data(), st.range(0), -std::numeric_limits<float>::infinity()));
  st.SetItemsProcessed(st.iterations());
}
BENCHMARK(BM_RowMax)->Apply(row_args);

void BM_ArgmaxStd(benchmark::State& st) {
  Tensor x = random({st.range(0)}, 7);
  for (auto _ : st) benchmark::DoNotOptimize(std::max_element(x.data(), x.data() + st.range(0)));
  st.SetItemsProcessed(st.iterations());
}
BENCHMARK(BM_ArgmaxStd)->Apply(row_args);

void BM_Argmax(benchmark::State& st) {
  Tensor x = random({st.range(0)}, 7);
  for (auto _ : st) benchmark::DoNotOptimize(vmath::argmax(x.data(), st.range(0)));
  st.SetItemsProcessed(st.iterations());
}
BENCHMARK(BM_Argmax)->Apply(row_args);

void BM_Top5PartialSort(benchmark::State& st) {  // beam search's code before kernels::top_k
  const int64_t V = st.range(0);
  Tensor x = random({V}, 7);
  const float* row = x.data();
  std::vector<int32_t> top(V);
  for (auto _ : st) {
    std::iota(top.begin(), top.end(), 0);
    std::partial_sort(top.begin(), top.begin() + 5, top.end(), [&](int32_t a, int32_t c) {
      return row[a] != row[c] ? row[a] > row[c] : a < c;
    });
    benchmark::DoNotOptimize(top.data());
  }
  st.SetItemsProcessed(st.iterations());
}
BENCHMARK(BM_Top5PartialSort)->Apply(row_args);

void BM_Top5(benchmark::State& st) {
  Tensor x = random({st.range(0)}, 7);
  std::vector<int32_t> top(5);
  for (auto _ : st) {
    kernels::top_k(x.data(), st.range(0), 5, top.data());
    benchmark::DoNotOptimize(top.data());
  }
  st.SetItemsProcessed(st.iterations());
}
BENCHMARK(BM_Top5)->Apply(row_args);

void BM_CrossEntropyForward(benchmark::State& st) {  // 256 rows (target tokens) of V logits
  const int64_t V = st.range(0), N = 256;
  Tensor x = random({N, V}, 7), p = Tensor::zeros({N, V});
  std::vector<int32_t> t(N);
  for (int64_t r = 0; r < N; ++r) t[r] = static_cast<int32_t>(r * 37 % V);
  int64_t count = 0;
  for (auto _ : st)
    benchmark::DoNotOptimize(
        kernels::cross_entropy_forward(x.data(), N, V, t.data(), -1, 0.1f, p.data(), &count));
  st.SetItemsProcessed(st.iterations() * N);
}
BENCHMARK(BM_CrossEntropyForward)->Apply(row_args);

}  // namespace
}  // namespace heed

BENCHMARK_MAIN();
