// The int8 screen of an fp32 output layer's argmax: the id and the float of the whole layer's
// read (per-row dots) on random layers, on ties (the lower id) and near-ties below the int8
// resolution, while reading few rows in fp32; x not finite: no answer.
#include "heed/kernels/argmax_screen.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "support/gradcheck.h"

namespace heed {
namespace {

TEST(ArgmaxScreen, FindsTheWholeReadsArgmaxReadingFewRows) {
  if (!kernels::argmax_screen_available()) GTEST_SKIP() << "no int8 kernel in this build";
  Rng rng(11);
  for (int64_t K : {128, 24}) {  // four rows a dot, and one (K not a multiple of 16)
    const int64_t N = 3000, first = 3;
    Tensor w = testing::random_tensor({N, K}, rng, -1, 1);
    Tensor b = testing::random_tensor({N}, rng, -0.5f, 0.5f);
    float* W = w.data();
    // row 2000 = row 100 (an exact tie: the lower id wins); row 2001 = row 100 + 1e-6 in one
    // entry (far below the int8 step: only the fp32 reads can tell them apart)
    for (int64_t k = 0; k < K; ++k) W[2000 * K + k] = W[2001 * K + k] = W[100 * K + k];
    b.data()[2000] = b.data()[2001] = b.data()[100];
    W[2001 * K + 5] += 1e-6f;
    const kernels::ArgmaxScreen s = kernels::make_argmax_screen(W, N, K);
    std::vector<int8_t> qx(K);
    std::vector<int32_t> acc(N);
    std::vector<float> approx(N), z(N);
    const kernels::ScreenScratch scratch{qx.data(), acc.data(), approx.data()};
    int64_t most_read = 0;
    for (int trial = 0; trial < 40; ++trial) {
      Tensor x = testing::random_tensor({K}, rng, -2, 2);
      if (trial % 2 == 1)  // x along row 100: rows 100, 2000 and 2001 on top, a hair apart
        for (int64_t k = 0; k < K; ++k) x.data()[k] = 3.f * W[100 * K + k] + 0.1f * x.data()[k];
      kernels::dot_rows(x.data(), W, K, b.data(), 0, N, z.data());
      int64_t want = first;
      for (int64_t n = first; n < N; ++n)
        if (z[n] > z[want]) want = n;
      int32_t id = -1;
      float value = 0;
      int64_t read = 0;
      ASSERT_TRUE(
          kernels::screened_argmax(x.data(), W, b.data(), s, first, scratch, &id, &value, &read));
      ASSERT_EQ(id, want) << "K " << K << ", trial " << trial;
      EXPECT_EQ(value, z[want]) << "K " << K << ", trial " << trial;
      EXPECT_GE(read, trial % 2 == 1 ? 3 : 1);  // the three rows a hair apart are all read
      most_read = std::max(most_read, read);
    }
    EXPECT_LT(most_read, N / 20) << "K " << K << ": the screen read most rows in fp32";
  }
}

TEST(ArgmaxScreen, DotRowsAreDotsAndXNotFiniteHasNoAnswer) {
  if (!kernels::argmax_screen_available()) GTEST_SKIP() << "no int8 kernel in this build";
  Rng rng(12);
  const int64_t N = 130, K = 32;
  Tensor w = testing::random_tensor({N, K}, rng);
  Tensor x = testing::random_tensor({K}, rng);
  std::vector<float> z(N);
  kernels::dot_rows(x.data(), w.data(), K, nullptr, 0, N, z.data());
  for (int64_t n = 0; n < N; ++n) {
    double want = 0;
    for (int64_t k = 0; k < K; ++k) want += static_cast<double>(x.data()[k]) * w.data()[n * K + k];
    EXPECT_NEAR(z[n], want, 1e-5) << n;
  }
  const kernels::ArgmaxScreen s = kernels::make_argmax_screen(w.data(), N, K);
  std::vector<int8_t> qx(K);
  std::vector<int32_t> acc(N);
  std::vector<float> approx(N);
  x.data()[7] = std::numeric_limits<float>::quiet_NaN();
  int32_t id = -1;
  float value = 0;
  EXPECT_FALSE(kernels::screened_argmax(x.data(), w.data(), nullptr, s, 0,
                                        {qx.data(), acc.data(), approx.data()}, &id, &value));
  EXPECT_EQ(id, -1);
}

}  // namespace
}  // namespace heed
