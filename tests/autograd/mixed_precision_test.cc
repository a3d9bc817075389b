// linear() and the fused RNN cells in a graph of Precision::bf16 against the same graph in fp32.
// On operands that bf16 holds exactly the two must agree to fp32 summation order (values and all
// gradients, accumulated gradients included); on arbitrary operands they must differ, by bf16's
// rounding and no more. And a parameter is rounded once per graph.
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

// gru_cell and lstm_cell, each run for `steps` time steps with the same parameter U (the second
// step reads Graph::bf16_value's copy), the loss the sum of the last states. Returns the states
// and the gradients of h0, the inputs and U.
std::vector<Tensor> cells(Precision p, bool bf16_exact, int steps) {
  Rng rng(9);
  const int64_t B = 5, H = 32;
  ParameterStore store;
  Parameter& Ug = store.add("Ug", {3 * H, H});
  Parameter& bg = store.add("bg", {3 * H});
  Parameter& Ul = store.add("Ul", {4 * H, H});
  std::vector<Tensor> in = {
      testing::random_tensor({B, 3 * H}, rng), testing::random_tensor({B, 4 * H}, rng),
      testing::random_tensor({B, H}, rng), testing::random_tensor({B, H}, rng)};
  for (Parameter* q : {&Ug, &bg, &Ul})
    q->value.copy_from(testing::random_tensor(q->value.shape(), rng, -0.3f, 0.3f));
  if (bf16_exact)
    for (Tensor* x : {&in[0], &in[1], &in[2], &in[3], &Ug.value, &Ul.value})
      for (float& v : x->span()) v = kernels::from_bf16(kernels::to_bf16(v));
  Graph g(Mode::Train);
  g.set_precision(p);
  Var gx3 = g.variable(in[0]), gx4 = g.variable(in[1]), h0 = g.variable(in[2]),
      c0 = g.variable(in[3]);
  Var h = h0;
  LstmState l{h0, c0};
  for (int t = 0; t < steps; ++t) {
    h = gru_cell(gx3, h, g.param(Ug), g.param(bg));
    l = lstm_cell(gx4, l.h, l.c, g.param(Ul));
  }
  g.backward(sum_all(h) + sum_all(l.h) + sum_all(l.c));
  return {h.value().clone(),  l.h.value().clone(), l.c.value().clone(), h0.grad().clone(),
          gx3.grad().clone(), gx4.grad().clone(),  Ug.grad.clone(),     Ul.grad.clone()};
}

TEST(MixedPrecision, CellsRunTheirRecurrentProductInBf16) {
  // one step on exact operands: the forward agrees to summation order; the backward rounds dy
  // (the gates' derivatives) to bf16, a relative 2^-9, in sums of <= 4H = 128 terms
  auto a = cells(Precision::fp32, true, 1), b = cells(Precision::bf16, true, 1);
  for (size_t i = 0; i < 3; ++i) EXPECT_LT(max_abs_diff(a[i], b[i]), 1e-5f) << "state " << i;
  for (size_t i = 3; i < a.size(); ++i) {
    EXPECT_GT(max_abs_diff(a[i], b[i]), 0.f) << "gradient " << i << " was not computed in bf16";
    EXPECT_LT(max_abs_diff(a[i], b[i]), 128 * 0x1p-9f / 8) << "gradient " << i;
  }
  // two steps: the second multiplies a state bf16 does not hold (h U^T: 32 terms < 0.3 each)
  auto c = cells(Precision::fp32, true, 2), d = cells(Precision::bf16, true, 2);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_GT(max_abs_diff(c[i], d[i]), 0.f) << "state " << i << " was not computed in bf16";
    EXPECT_LT(max_abs_diff(c[i], d[i]), 32 * 0.3f * 0x1p-7f / 8) << "state " << i;
  }
  for (size_t i = 3; i < c.size(); ++i)
    EXPECT_LT(max_abs_diff(c[i], d[i]), 2 * 128 * 0x1p-9f / 8) << "gradient " << i;
}

TEST(MixedPrecision, AParameterIsRoundedOncePerGraph) {
  ParameterStore store;
  Parameter& w = store.add("w", {3, 4});
  w.value.fill(1.5f);
  Graph g(Mode::Train);
  g.set_precision(Precision::bf16);
  const kernels::bf16* first = g.bf16_value(w);
  EXPECT_EQ(g.bf16_value(w), first);  // the same copy, not a second conversion
  for (int64_t i = 0; i < 12; ++i) EXPECT_EQ(kernels::from_bf16(first[i]), 1.5f);
  // the optimizer changes w between steps; the next step's graph (after clear()) sees it
  w.value.fill(-2.f);
  g.clear();
  const kernels::bf16* next = g.bf16_value(w);
  for (int64_t i = 0; i < 12; ++i) EXPECT_EQ(kernels::from_bf16(next[i]), -2.f);
}

}  // namespace
}  // namespace heed
