// The fused additive energy against its unfused formula, reshape(linear(tanh(K + q), v)), in
// value and in every gradient; thread independence. The same for the location-aware energy
// against additive_energy(K + linear(f, U), q, v).
#include <gtest/gtest.h>

#include "heed/autograd/ops.h"
#include "heed/kernels/parallel.h"
#include "support/gradcheck.h"

namespace heed {
namespace {

constexpr int64_t B = 3, S = 7, A = 5;

Var unfused(Var K, Var q, Var v) {  // K [b, s, a], q [b, a], v [1, a] -> [b, s]
  const int64_t b = K.dim(0), s = K.dim(1), a = K.dim(2);
  return reshape(linear(tanh(K + reshape(q, Shape{b, 1, a})), v), Shape{b, s});
}

// Widths below, at and across the 16 lanes of the vectorised kernel (its masked last step).
TEST(AdditiveEnergy, EqualsTheUnfusedFormulaWithItsGradients) {
  Rng rng(3);
  for (int64_t a_dim : {A, int64_t{16}, int64_t{37}, int64_t{64}}) {
    const Tensor K = testing::random_tensor({B, S, a_dim}, rng, -3.f, 3.f);
    const Tensor q = testing::random_tensor({B, a_dim}, rng, -3.f, 3.f);
    const Tensor v = testing::random_tensor({1, a_dim}, rng);
    const Tensor w = testing::random_tensor({B, S}, rng);  // d loss / d e
    auto run = [&](bool fused) {
      Graph g(Mode::Train);
      Var k = g.variable(K), qq = g.variable(q), vv = g.variable(v);
      Var e = fused ? additive_energy(k, qq, vv) : unfused(k, qq, vv);
      g.backward(e, w);
      return std::vector<Tensor>{e.value().clone(), k.grad().clone(), qq.grad().clone(),
                                 vv.grad().clone()};
    };
    const auto a = run(true), b = run(false);
    for (size_t t = 0; t < a.size(); ++t)
      for (int64_t i = 0; i < a[t].numel(); ++i)
        EXPECT_NEAR(a[t].data()[i], b[t].data()[i], 1e-5)
            << "width " << a_dim << " tensor " << t << " entry " << i;
  }
}

TEST(AdditiveEnergy, GradientMatchesFiniteDifferences) {
  Rng rng(4);
  testing::expect_gradients(
      [](Graph&, std::vector<Var>& x) { return additive_energy(x[0], x[1], x[2]); },
      {testing::random_tensor({B, S, A}, rng), testing::random_tensor({B, A}, rng),
       testing::random_tensor({1, A}, rng)},
      {.eps = 1e-3f, .rtol = 1e-2f, .atol = 1e-4f, .max_entries = 64});
}

TEST(AdditiveEnergy, SameBitsOnOneAndTwoThreads) {
  Rng rng(5);
  const Tensor K = testing::random_tensor({64, 40, 32}, rng);
  const Tensor q = testing::random_tensor({64, 32}, rng);
  const Tensor v = testing::random_tensor({1, 32}, rng);
  auto run = [&](int threads) {
    set_threads(threads);
    Graph g(Mode::Train);
    Var vv = g.variable(v);
    Var e = additive_energy(g.variable(K), g.variable(q), vv);
    g.backward(sum_all(e));
    return std::pair{e.value().clone(), vv.grad().clone()};
  };
  const auto one = run(1), two = run(2);
  set_threads(1);
  for (int64_t i = 0; i < one.first.numel(); ++i)
    ASSERT_EQ(one.first.data()[i], two.first.data()[i]);
  for (int64_t i = 0; i < one.second.numel(); ++i)
    ASSERT_EQ(one.second.data()[i], two.second.data()[i]);
}

// Widths below, at and across 16 lanes, with one and several location features.
TEST(LocationEnergy, EqualsTheUnfusedFormulaWithItsGradients) {
  Rng rng(6);
  for (const auto& [a_dim, l_dim] : {std::pair<int64_t, int64_t>{A, 1}, {16, 3}, {37, 10}}) {
    const Tensor K = testing::random_tensor({B, S, a_dim}, rng, -2.f, 2.f);
    const Tensor f = testing::random_tensor({B, S, l_dim}, rng, -2.f, 2.f);
    const Tensor U = testing::random_tensor({a_dim, l_dim}, rng);
    const Tensor q = testing::random_tensor({B, a_dim}, rng, -2.f, 2.f);
    const Tensor v = testing::random_tensor({1, a_dim}, rng);
    Tensor w = testing::random_tensor({B, S}, rng);  // d loss / d e
    w.data()[4] = 0.f;                               // an entry the backward skips (padding)
    auto run = [&](bool fused) {
      Graph g(Mode::Train);
      Var k = g.variable(K), ff = g.variable(f), uu = g.variable(U), qq = g.variable(q),
          vv = g.variable(v);
      Var e =
          fused ? location_energy(k, ff, uu, qq, vv) : additive_energy(k + linear(ff, uu), qq, vv);
      g.backward(e, w);
      return std::vector<Tensor>{e.value().clone(), k.grad().clone(),  ff.grad().clone(),
                                 uu.grad().clone(), qq.grad().clone(), vv.grad().clone()};
    };
    const auto a = run(true), b = run(false);
    for (size_t t = 0; t < a.size(); ++t)
      for (int64_t i = 0; i < a[t].numel(); ++i)
        EXPECT_NEAR(a[t].data()[i], b[t].data()[i], 1e-5)
            << "width " << a_dim << " features " << l_dim << " tensor " << t << " entry " << i;
  }
}

TEST(LocationEnergy, GradientMatchesFiniteDifferences) {
  Rng rng(7);
  constexpr int64_t L = 3;
  testing::expect_gradients(
      [](Graph&, std::vector<Var>& x) { return location_energy(x[0], x[1], x[2], x[3], x[4]); },
      {testing::random_tensor({B, S, A}, rng), testing::random_tensor({B, S, L}, rng),
       testing::random_tensor({A, L}, rng), testing::random_tensor({B, A}, rng),
       testing::random_tensor({1, A}, rng)},
      {.eps = 1e-3f, .rtol = 1e-2f, .atol = 1e-4f, .max_entries = 64});
}

TEST(LocationEnergy, SameBitsOnOneAndTwoThreads) {
  Rng rng(8);
  const Tensor K = testing::random_tensor({64, 40, 32}, rng);
  const Tensor f = testing::random_tensor({64, 40, 4}, rng);
  const Tensor U = testing::random_tensor({32, 4}, rng);
  const Tensor q = testing::random_tensor({64, 32}, rng);
  const Tensor v = testing::random_tensor({1, 32}, rng);
  auto run = [&](int threads) {
    set_threads(threads);
    Graph g(Mode::Train);
    Var uu = g.variable(U), vv = g.variable(v);
    Var e = location_energy(g.variable(K), g.variable(f), uu, g.variable(q), vv);
    g.backward(sum_all(e));
    return std::vector<Tensor>{e.value().clone(), uu.grad().clone(), vv.grad().clone()};
  };
  const auto one = run(1), two = run(2);
  set_threads(1);
  for (size_t t = 0; t < one.size(); ++t)
    for (int64_t i = 0; i < one[t].numel(); ++i) ASSERT_EQ(one[t].data()[i], two[t].data()[i]);
}

}  // namespace
}  // namespace heed
