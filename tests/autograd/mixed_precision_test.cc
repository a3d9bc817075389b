// linear() in a graph of Precision::bf16 against the same graph in fp32. On operands that bf16
// holds exactly the two must agree to fp32 summation order (values and all three gradients,
// accumulated gradients included); on arbitrary operands they must differ, by bf16's rounding
// and no more.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "heed/autograd/ops.h"
#include "heed/kernels/bf16.h"
#include "support/gradcheck.h"

namespace heed {
namespace {

struct LinearRun {
  Tensor y, dx, dw, db;
};

// y = linear(x, W, b) used twice (so dx, dW and db each accumulate a second product), seeded
// with dy at the output. 3 x 47 = 141 rows: a multiple of kBf16Rows and a tail.
LinearRun run(Precision p, const std::vector<Tensor>& in, const Tensor& dy) {
  Graph g(Mode::Train);
  g.set_precision(p);
  Var x = g.variable(in[0]), w = g.variable(in[1]), b = g.variable(in[2]);
  Var y = add(linear(x, w, b), mul(linear(x, w, b), g.constant(Tensor::full(dy.shape(), 0.5f))));
  g.backward(y, dy);
  return {y.value().clone(), x.grad().clone(), w.grad().clone(), b.grad().clone()};
}

std::vector<Tensor> operands(Rng& rng, bool bf16_exact) {
  std::vector<Tensor> t = {testing::random_tensor({3, 47, 24}, rng),
                           testing::random_tensor({40, 24}, rng), testing::random_tensor({40}, rng),
                           testing::random_tensor({3, 47, 40}, rng)};  // dy
  if (bf16_exact)
    for (Tensor& x : t)
      for (float& v : x.span()) v = kernels::from_bf16(kernels::to_bf16(v));
  return t;
}

float max_abs_diff(const Tensor& a, const Tensor& b) {
  float m = 0;
  for (int64_t i = 0; i < a.numel(); ++i) m = std::max(m, std::abs(a.data()[i] - b.data()[i]));
  return m;
}

TEST(MixedPrecision, LinearEqualsFp32OnOperandsBf16HoldsExactly) {
  Rng rng(7);
  auto t = operands(rng, true);
  // 0.5 * y is exact in bf16 too, so the second product's dy is as well
  LinearRun a = run(Precision::fp32, t, t[3]), b = run(Precision::bf16, t, t[3]);
  EXPECT_LT(max_abs_diff(a.y, b.y), 1e-5f);
  EXPECT_LT(max_abs_diff(a.dx, b.dx), 1e-5f);
  EXPECT_LT(max_abs_diff(a.dw, b.dw), 1e-4f);  // a sum over 141 rows
  EXPECT_LT(max_abs_diff(a.db, b.db), 1e-4f);
}

TEST(MixedPrecision, LinearDiffersFromFp32ByBf16RoundingOnly) {
  Rng rng(8);
  auto t = operands(rng, false);
  LinearRun a = run(Precision::fp32, t, t[3]), b = run(Precision::bf16, t, t[3]);
  // each product of two operands rounded to 8 significant bits: a relative error below 2^-8 per
  // term, and sums of 24 (y, dx: K = 24, 40) or 141 terms (dW) of size <= 1
  const std::pair<const Tensor*, const Tensor*> pairs[] = {
      {&a.y, &b.y}, {&a.dx, &b.dx}, {&a.dw, &b.dw}};
  const float bound[] = {24 * 0x1p-7f, 40 * 0x1p-7f, 141 * 0x1p-7f};
  for (int i = 0; i < 3; ++i) {
    const float d = max_abs_diff(*pairs[i].first, *pairs[i].second);
    EXPECT_GT(d, 0.f) << "product " << i << " was not computed in bf16";
    EXPECT_LT(d, bound[i] / 8) << "product " << i;  // far inside the worst case
  }
  EXPECT_LT(max_abs_diff(a.db, b.db), 1e-4f);  // the bias gradient stays fp32
}

}  // namespace
}  // namespace heed
