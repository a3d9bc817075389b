// The 2-D convolution against its definition (a direct sum over the k x k taps and channels,
// strides 1-3, kernels 1-3, odd sizes whose last rows and columns no window reaches) and its
// finite-difference gradients, with and without bias.
#include <gtest/gtest.h>

#include <vector>

#include "heed/autograd/ops.h"
#include "heed/autograd/ops/conv2d.h"
#include "support/gradcheck.h"

namespace heed {
namespace {

// y[b, i, j, o] = bias[o] + sum_p sum_q sum_c w[o, (p k + q) C + c] x[b, i s + p, j s + q, c]
std::vector<double> direct(const Tensor& x, const Tensor& w, const Tensor* bias, int64_t k,
                           int64_t s) {
  const int64_t B = x.shape()[0], H = x.shape()[1], W = x.shape()[2], C = x.shape()[3];
  const int64_t O = w.shape()[0], Ho = (H - k) / s + 1, Wo = (W - k) / s + 1;
  std::vector<double> y(static_cast<size_t>(B * Ho * Wo * O));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < Ho; ++i)
      for (int64_t j = 0; j < Wo; ++j)
        for (int64_t o = 0; o < O; ++o) {
          double sum = bias ? bias->data()[o] : 0.0;
          for (int64_t p = 0; p < k; ++p)
            for (int64_t q = 0; q < k; ++q)
              for (int64_t c = 0; c < C; ++c)
                sum += static_cast<double>(w.data()[o * k * k * C + (p * k + q) * C + c]) *
                       x.data()[((b * H + i * s + p) * W + j * s + q) * C + c];
          y[static_cast<size_t>(((b * Ho + i) * Wo + j) * O + o)] = sum;
        }
  return y;
}

TEST(Conv2d, EqualsTheDirectSum) {
  Rng rng(3);
  const int64_t B = 2, H = 9, W = 8, C = 3, O = 4;
  for (int64_t k : {1, 2, 3})
    for (int64_t s : {1, 2, 3}) {
      Tensor x = testing::random_tensor({B, H, W, C}, rng);
      Tensor w = testing::random_tensor({O, k * k * C}, rng);
      Tensor bias = testing::random_tensor({O}, rng);
      Graph g(Mode::Inference);
      Var y = conv2d(g.constant(x), g.constant(w), g.constant(bias), {.kernel = k, .stride = s});
      ASSERT_EQ(y.shape(), (Shape{B, (H - k) / s + 1, (W - k) / s + 1, O}));
      const std::vector<double> want = direct(x, w, &bias, k, s);
      for (size_t i = 0; i < want.size(); ++i)
        ASSERT_NEAR(y.value().data()[i], want[i], 1e-5) << "k " << k << " s " << s;
    }
}

TEST(Conv2d, Gradients) {
  for (int64_t s : {1, 2}) {
    Rng rng(static_cast<uint64_t>(7 + s));
    testing::expect_gradients(
        [&](Graph&, std::vector<Var>& v) {
          return conv2d(v[0], v[1], v[2], {.kernel = 3, .stride = s});
        },
        {testing::random_tensor({2, 7, 6, 2}, rng), testing::random_tensor({3, 18}, rng),
         testing::random_tensor({3}, rng)},
        {.eps = 1e-2f, .rtol = 1e-2f, .atol = 1e-3f});
    testing::expect_gradients(  // no bias, one input channel (the first layer of a front end)
        [&](Graph&, std::vector<Var>& v) {
          return conv2d(v[0], v[1], Var{}, {.kernel = 3, .stride = s});
        },
        {testing::random_tensor({1, 8, 5, 1}, rng), testing::random_tensor({2, 9}, rng)},
        {.eps = 1e-2f, .rtol = 1e-2f, .atol = 1e-3f});
  }
}

TEST(Conv2d, RefusesAnInputSmallerThanItsKernel) {
  Rng rng(1);
  Graph g(Mode::Inference);
  EXPECT_THROW(conv2d(g.constant(testing::random_tensor({1, 2, 5, 1}, rng)),
                      g.constant(testing::random_tensor({2, 9}, rng)), Var{}),
               Error);
}

}  // namespace
}  // namespace heed
