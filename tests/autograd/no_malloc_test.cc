// A training step of a warmed-up graph makes no heap allocation: values, gradients, saved
// activations and backward closures all come from the graph's arena. Counted by replacing the
// global operator new in this test binary (except under ThreadSanitizer, whose runtime defines
// operator new itself: there the test is skipped).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>

#include "heed/autograd/ops.h"
#include "heed/nn/init.h"
#include "heed/train/optimizer.h"

#if defined(__SANITIZE_THREAD__)
#define HEED_COUNT_ALLOCATIONS 0
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define HEED_COUNT_ALLOCATIONS 0
#endif
#endif
#ifndef HEED_COUNT_ALLOCATIONS
#define HEED_COUNT_ALLOCATIONS 1
#endif

namespace {
std::atomic<long> g_allocations{0};
}

#if HEED_COUNT_ALLOCATIONS

// GCC reads free() inside a replacement operator delete as a mismatch with operator new; here
// both sides are malloc/free by construction.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

// The plain and nothrow forms of new and delete, scalar and array, all on malloc/free (so
// sanitizers see matching pairs); the aligned forms are left to the runtime and pair among
// themselves.
void* operator new(std::size_t n) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) {
  return operator new(n);
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(n ? n : 1);
}
void* operator new[](std::size_t n, const std::nothrow_t& t) noexcept {
  return operator new(n, t);
}
void operator delete(void* p, const std::nothrow_t&) noexcept {
  std::free(p);
}
void operator delete[](void* p, const std::nothrow_t&) noexcept {
  std::free(p);
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete[](void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
  std::free(p);
}
#endif  // HEED_COUNT_ALLOCATIONS

namespace heed {
namespace {

TEST(Arena, WarmTrainingStepMakesNoHeapAllocation) {
  if (!HEED_COUNT_ALLOCATIONS) GTEST_SKIP() << "operator new is the sanitizer's here";
  const int64_t B = 8, E = 16, H = 32, V = 50, S = 5;
  ParameterStore params;
  Rng rng(1);
  Scope root(params, rng, "m");
  Parameter& emb = root.param("emb", {V, E}, Init::normal(0.1f), /*row_sparse=*/true);
  Parameter& W = root.param("W", {3 * H, E}, Init::glorot_uniform());
  Parameter& b = root.param("b", {3 * H}, Init::zeros());
  Parameter& U = root.param("U", {3 * H, H}, Init::orthogonal(3));
  Parameter& bh = root.param("bh", {3 * H}, Init::zeros());
  Parameter& out = root.param("out", {V, H}, Init::glorot_uniform());
  Parameter& g1 = root.param("ln/g", {H}, Init::ones());
  Parameter& b1 = root.param("ln/b", {H}, Init::zeros());
  Optimizer opt({}, params);
  std::vector<int32_t> ids(S * B), targets(B);
  for (auto& i : ids) i = static_cast<int32_t>(rng.below(V));
  for (auto& t : targets) t = static_cast<int32_t>(rng.below(V));
  Graph g;
  auto step = [&] {
    Var gx = linear(embedding(g.param(emb), ids, {S, B}), g.param(W), g.param(b));  // [S, B, 3H]
    Var h = g.constant(g.zeros({B, H}));
    for (int64_t t = 0; t < S; ++t) h = gru_cell(select(gx, 0, t), h, g.param(U), g.param(bh));
    Var y = dropout(layer_norm(h, g.param(g1), g.param(b1)), 0.1f);
    Var loss = cross_entropy(linear(y, g.param(out)), targets, {.label_smoothing = 0.1f});
    g.backward(loss);
    opt.step(1e-3f, clip_scale(grad_norm(params), 1.0));  // as the training loop clips
    g.clear();
  };
  step();
  step();
  long before = g_allocations.load();
  step();
  EXPECT_EQ(g_allocations.load() - before, 0) << "heap allocations in one warm training step";
}

}  // namespace
}  // namespace heed
