// Gradient checks on randomly drawn shapes: broadcasting pairs for + - * /, matmuls of random
// sizes and transposes, softmax with random padding masks. Complements the fixed registry.
#include <gtest/gtest.h>

#include <limits>

#include "support/gradcheck.h"

namespace heed {
namespace {

// A random shape of rank 1..4 and a second shape broadcastable with it (axes dropped from the
// left or set to 1).
std::pair<Shape, Shape> broadcast_pair(Rng& rng) {
  int rank = 1 + static_cast<int>(rng.below(4));
  std::vector<int64_t> a, b;
  for (int i = 0; i < rank; ++i) a.push_back(1 + rng.below(4));
  int drop = static_cast<int>(rng.below(rank));
  for (int i = drop; i < rank; ++i) b.push_back(rng.below(3) == 0 ? 1 : a[i]);
  if (rng.below(2)) std::swap(a, b);
  return {Shape(a), Shape(b)};
}

TEST(RandomShapes, BroadcastingArithmetic) {
  Rng rng(2024);
  for (int trial = 0; trial < 24; ++trial) {
    auto [sa, sb] = broadcast_pair(rng);
    int op = trial % 4;
    SCOPED_TRACE("op " + std::to_string(op) + ": " + sa.str() + " with " + sb.str());
    std::vector<Tensor> in = {testing::random_tensor(sa, rng),
                              testing::random_tensor(sb, rng, 0.5f, 2.f)};
    testing::expect_gradients(
        [op](Graph&, std::vector<Var>& x) {
          switch (op) {
            case 0:
              return x[0] + x[1];
            case 1:
              return x[0] - x[1];
            case 2:
              return x[0] * x[1];
            default:
              return x[0] / x[1];
          }
        },
        in, {.max_entries = 16});
  }
}

TEST(RandomShapes, MatmulSizesAndTransposes) {
  Rng rng(7);
  for (int trial = 0; trial < 16; ++trial) {
    int64_t B = 1 + rng.below(3), M = 1 + rng.below(6), N = 1 + rng.below(6), K = 1 + rng.below(6);
    bool ta = rng.below(2), tb = rng.below(2), batched_b = rng.below(2);
    Shape sa = ta ? Shape{B, K, M} : Shape{B, M, K};
    Shape sb =
        batched_b ? (tb ? Shape{B, N, K} : Shape{B, K, N}) : (tb ? Shape{N, K} : Shape{K, N});
    SCOPED_TRACE(sa.str() + (ta ? "^T" : "") + " x " + sb.str() + (tb ? "^T" : ""));
    testing::expect_gradients(
        [=](Graph&, std::vector<Var>& x) {
          return matmul(x[0], x[1], {.trans_a = ta, .trans_b = tb});
        },
        {testing::random_tensor(sa, rng), testing::random_tensor(sb, rng)}, {.max_entries = 16});
  }
}

TEST(RandomShapes, SoftmaxWithRandomPaddingMasks) {
  const float inf = std::numeric_limits<float>::infinity();
  Rng rng(11);
  for (int trial = 0; trial < 8; ++trial) {
    int64_t B = 1 + rng.below(3), T = 1 + rng.below(4), S = 2 + rng.below(6);
    Tensor mask = Tensor::zeros({B, 1, S});  // [B, 1, S]: each sequence keeps >= 1 position
    for (int64_t b = 0; b < B; ++b)
      for (int64_t s = 1 + rng.below(S); s < S; ++s) mask.data()[b * S + s] = -inf;
    bool log = trial % 2;
    testing::expect_gradients(
        [=](Graph&, std::vector<Var>& x) {
          return log ? masked_fill(log_softmax(x[0], mask), mask, 0.f) : softmax(x[0], mask);
        },
        {testing::random_tensor({B, T, S}, rng, -2.f, 2.f)}, {.max_entries = 16});
  }
}

}  // namespace
}  // namespace heed
