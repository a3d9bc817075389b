// The fused context vector against the batched product it replaces, reshape(matmul([B, 1, S],
// [B, S, D])), in value and in both gradients (with weights of exactly 0, which the kernel
// skips); finite differences; thread independence.
#include <gtest/gtest.h>

#include "heed/autograd/ops.h"
#include "heed/kernels/parallel.h"
#include "support/gradcheck.h"

namespace heed {
namespace {

constexpr int64_t B = 3, S = 7, D = 5;

Var unfused(Var alpha, Var h) {  // alpha [b, s], h [b, s, d] -> [b, d]
  const int64_t b = h.dim(0), s = h.dim(1), d = h.dim(2);
  return reshape(matmul(reshape(alpha, Shape{b, 1, s}), h), Shape{b, d});
}

TEST(ContextVector, EqualsTheBatchedProductWithItsGradients) {
  Rng rng(12);
  for (int64_t d : {D, int64_t{16}, int64_t{37}}) {
    Tensor alpha = testing::random_tensor({B, S}, rng, 0.f, 1.f);
    alpha.data()[S - 1] = 0.f;  // padding: a weight of 0
    alpha.data()[S + 2] = 0.f;
    const Tensor h = testing::random_tensor({B, S, d}, rng);
    const Tensor w = testing::random_tensor({B, d}, rng);  // d loss / d c
    auto run = [&](bool fused) {
      Graph g(Mode::Train);
      Var a = g.variable(alpha), m = g.variable(h);
      Var c = fused ? context_vector(a, m) : unfused(a, m);
      g.backward(c, w);
      return std::vector<Tensor>{c.value().clone(), a.grad().clone(), m.grad().clone()};
    };
    const auto x = run(true), y = run(false);
    for (size_t t = 0; t < x.size(); ++t)
      for (int64_t i = 0; i < x[t].numel(); ++i)
        EXPECT_NEAR(x[t].data()[i], y[t].data()[i], 1e-5)
            << "width " << d << " tensor " << t << " entry " << i;
  }
}

TEST(ContextVector, GradientMatchesFiniteDifferences) {
  Rng rng(13);
  testing::expect_gradients(
      [](Graph&, std::vector<Var>& x) { return context_vector(x[0], x[1]); },
      {testing::random_tensor({B, S}, rng), testing::random_tensor({B, S, D}, rng)},
      {.eps = 1e-3f, .rtol = 1e-2f, .atol = 1e-4f, .max_entries = 64});
}

TEST(ContextVector, SameBitsOnOneAndTwoThreads) {
  Rng rng(14);
  const Tensor alpha = testing::random_tensor({64, 40}, rng);
  const Tensor h = testing::random_tensor({64, 40, 32}, rng);
  auto run = [&](int threads) {
    set_threads(threads);
    Graph g(Mode::Train);
    Var a = g.variable(alpha), m = g.variable(h);
    Var c = context_vector(a, m);
    g.backward(sum_all(c));
    return std::vector<Tensor>{c.value().clone(), a.grad().clone(), m.grad().clone()};
  };
  const auto one = run(1), two = run(2);
  set_threads(1);
  for (size_t t = 0; t < one.size(); ++t)
    for (int64_t i = 0; i < one[t].numel(); ++i) ASSERT_EQ(one[t].data()[i], two[t].data()[i]);
}

TEST(ContextVector, RefusesMismatchedShapes) {
  Graph g(Mode::Train);
  Var a = g.constant(g.zeros(Shape{2, 3})), m = g.constant(g.zeros(Shape{2, 4, 5}));
  EXPECT_THROW(context_vector(a, m), Error);
}

}  // namespace
}  // namespace heed
