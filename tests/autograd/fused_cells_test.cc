// The fused GRU and LSTM cells against the same cells composed of basic ops: equal values and
// equal gradients for every input (the composed versions are themselves gradient-checked ops).
#include <gtest/gtest.h>

#include "support/gradcheck.h"

namespace heed {
namespace {

// GRU, Cho et al. 2014, composed: gh = h U^T + b_h, r/z/n gates, h' = (1 - z) n + z h
Var gru_composed(Var gx, Var h, Var U, Var bh) {
  int64_t H = h.dim(1);
  Var gh = linear(h, U, bh);
  Var r = sigmoid(slice(gx, 1, 0, H) + slice(gh, 1, 0, H));
  Var z = sigmoid(slice(gx, 1, H, H) + slice(gh, 1, H, H));
  Var n = tanh(slice(gx, 1, 2 * H, H) + r * slice(gh, 1, 2 * H, H));
  return (1.f - z) * n + z * h;
}

LstmState lstm_composed(Var gx, Var h, Var c, Var U) {
  int64_t H = h.dim(1);
  Var pre = gx + matmul(h, U, {.trans_b = true});
  Var i = sigmoid(slice(pre, 1, 0, H)), f = sigmoid(slice(pre, 1, H, H));
  Var g = tanh(slice(pre, 1, 2 * H, H)), o = sigmoid(slice(pre, 1, 3 * H, H));
  Var c2 = f * c + i * g;
  return {o * tanh(c2), c2};
}

void expect_same(const Tensor& a, const Tensor& b, float tol, const std::string& what) {
  ASSERT_EQ(a.shape(), b.shape()) << what;
  for (int64_t i = 0; i < a.numel(); ++i)
    ASSERT_NEAR(a.data()[i], b.data()[i], tol) << what << " entry " << i;
}

// Runs f_fused and f_composed on the same inputs; compares outputs and all input gradients.
void compare(const std::vector<Shape>& shapes, const testing::Fn& fused,
             const testing::Fn& composed) {
  Rng rng(3);
  std::vector<Tensor> in;
  for (const Shape& s : shapes) in.push_back(testing::random_tensor(s, rng, -1.5f, 1.5f));
  std::vector<std::vector<Tensor>> grads(2);
  std::vector<Tensor> outs;
  Tensor w;
  for (int k = 0; k < 2; ++k) {
    Graph g;
    std::vector<Var> v;
    for (auto& t : in) v.push_back(g.variable(t));
    Var out = (k == 0 ? fused : composed)(g, v);
    if (k == 0) w = testing::random_tensor(out.shape(), rng);
    g.backward(sum_all(out * g.constant(w)));
    outs.push_back(out.value().clone());
    for (auto& x : v) grads[k].push_back(x.grad().clone());
  }
  expect_same(outs[0], outs[1], 2e-6f, "value");
  for (size_t i = 0; i < in.size(); ++i)
    expect_same(grads[0][i], grads[1][i], 2e-5f, "gradient of input " + std::to_string(i));
}

TEST(FusedCells, GruEqualsComposedCell) {
  const int64_t B = 5, H = 19;  // odd H: no vector-width assumptions
  compare(
      {{B, 3 * H}, {B, H}, {3 * H, H}, {3 * H}},
      [](Graph&, auto& x) { return gru_cell(x[0], x[1], x[2], x[3]); },
      [](Graph&, auto& x) { return gru_composed(x[0], x[1], x[2], x[3]); });
}

TEST(FusedCells, LstmEqualsComposedCell) {
  const int64_t B = 4, H = 17;
  auto both = [](LstmState s) { return concat({s.h, s.c}, 1); };
  compare(
      {{B, 4 * H}, {B, H}, {B, H}, {4 * H, H}},
      [&](Graph&, auto& x) { return both(lstm_cell(x[0], x[1], x[2], x[3])); },
      [&](Graph&, auto& x) { return both(lstm_composed(x[0], x[1], x[2], x[3])); });
}

TEST(FusedCells, GruUnrolledOverTimeEqualsComposed) {
  // Three steps sharing U and b_h: gradients accumulate across steps in both versions.
  const int64_t B = 3, H = 8;
  auto unroll = [](bool fused) {
    return [fused](Graph&, std::vector<Var>& x) {
      Var h = x[1];
      for (int t = 0; t < 3; ++t) {
        Var gx = select(x[0], 0, t);
        h = fused ? gru_cell(gx, h, x[2], x[3]) : gru_composed(gx, h, x[2], x[3]);
      }
      return h;
    };
  };
  compare({{3, B, 3 * H}, {B, H}, {3 * H, H}, {3 * H}}, unroll(true), unroll(false));
}

}  // namespace
}  // namespace heed
