// The 1-D convolution against its definition (a direct sum over taps, causal and centred,
// dilated, on padded batches; both plans of kernels/conv1d.h, per sequence and packed), its
// finite-difference gradients (dilations 1-3, both paddings, odd lengths, with and without bias)
// and those of a WaveNet gated block tanh(a) * sigmoid(b); causality (outputs up to t bit-identical
// when later inputs change, through a dilated stack); the receptive field 1 + sum (k - 1) d,
// exactly: input t - RF + 1 moves output t, t - RF does not.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "heed/autograd/ops.h"
#include "support/gradcheck.h"

namespace heed {
namespace {

// y[b, t, o] = bias[o] + sum_i sum_c w[o, i C + c] x[b, t + off_i, c], zero outside [0, len_b)
std::vector<double> direct(const Tensor& x, const Tensor& w, const Tensor* bias,
                           const Conv1dOptions& o) {
  const int64_t B = x.shape()[0], T = x.shape()[1], C = x.shape()[2], O = w.shape()[0];
  std::vector<double> y(static_cast<size_t>(B * T * O), 0.0);
  for (int64_t b = 0; b < B; ++b) {
    const int64_t len = o.lengths.empty() ? T : o.lengths[b];
    for (int64_t t = 0; t < T; ++t)
      for (int64_t oc = 0; oc < O; ++oc) {
        double s = bias ? bias->data()[oc] : 0.0;
        for (int64_t i = 0; i < o.kernel; ++i) {
          const int64_t u = t + (i - (o.causal ? o.kernel - 1 : (o.kernel - 1) / 2)) * o.dilation;
          if (u < 0 || u >= len) continue;
          for (int64_t c = 0; c < C; ++c)
            s += static_cast<double>(w.data()[oc * o.kernel * C + i * C + c]) *
                 x.data()[(b * T + u) * C + c];
        }
        y[(b * T + t) * O + oc] = s;
      }
  }
  return y;
}

const std::vector<int32_t> kLengths = {7, 4, 1};

TEST(Conv1d, EqualsTheDirectSum) {
  Rng rng(1);
  const int64_t B = 3, T = 7, O = 4;
  for (int64_t C : {5, 1})  // one channel: the direct plan too
    for (bool causal : {true, false})
      for (int64_t k : {1, 3, 5})
        for (int64_t d : {1, 2, 3})
          for (bool padded : {false, true})
            for (int plan : {1, 2, 3}) {  // per sequence, packed, direct (C = 1)
              const Conv1dOptions o{.kernel = k,
                                    .dilation = d,
                                    .causal = causal,
                                    .lengths = padded ? std::span<const int32_t>(kLengths)
                                                      : std::span<const int32_t>{},
                                    .plan = plan};
              Tensor x = testing::random_tensor({B, T, C}, rng);
              Tensor w = testing::random_tensor({O, k * C}, rng);
              Tensor bias = testing::random_tensor({O}, rng);
              Graph g(Mode::Inference);
              Var y = conv1d(g.constant(x), g.constant(w), g.constant(bias), o);
              ASSERT_EQ(y.shape(), (Shape{B, T, O}));
              const std::vector<double> want = direct(x, w, &bias, o);
              for (size_t i = 0; i < want.size(); ++i)
                ASSERT_NEAR(y.value().data()[i], want[i], 1e-5)
                    << "channels " << C << " causal " << causal << " k " << k << " d " << d
                    << " padded " << padded << " plan " << plan;
            }
}

// Mixed precision (bf16 operands, fp32 sums): the output and the gradients of x, w and the
// bias within bf16's rounding of the fp32 ones, for both plans.
TEST(Conv1d, MixedPrecisionFollowsFp32) {
  const int64_t B = 3, T = 7, C = 6, O = 5;
  Rng rng(11);
  const Tensor x = testing::random_tensor({B, T, C}, rng);
  const Tensor w = testing::random_tensor({O, 3 * C}, rng);
  const Tensor bias = testing::random_tensor({O}, rng);
  const Tensor dy = testing::random_tensor({B, T, O}, rng);
  for (int plan : {1, 2}) {
    std::vector<Tensor> got[2];
    for (int bf16 : {0, 1}) {
      Graph g(Mode::Train);
      if (bf16) g.set_precision(Precision::bf16);
      Var vx = g.variable(x), vw = g.variable(w), vb = g.variable(bias);
      Var y =
          conv1d(vx, vw, vb,
                 {.kernel = 3, .dilation = 2, .causal = true, .lengths = kLengths, .plan = plan});
      g.backward(sum_all(mul(y, g.constant(dy))));
      got[bf16] = {y.value().clone(), vx.grad().clone(), vw.grad().clone(), vb.grad().clone()};
    }
    for (size_t k = 0; k < got[0].size(); ++k)
      for (int64_t i = 0; i < got[0][k].numel(); ++i) {
        const float a = got[0][k].data()[i], b = got[1][k].data()[i];
        ASSERT_NEAR(b, a, 0.03f + 0.02f * std::abs(a)) << "plan " << plan << ", tensor " << k;
      }
    EXPECT_NE(std::memcmp(got[0][0].data(), got[1][0].data(), sizeof(float) * B * T * O), 0)
        << "bf16 products round";
  }
}

TEST(Conv1d, Gradients) {
  const int64_t B = 3, T = 7, O = 2;
  for (int64_t C : {3, 1})  // one channel: the direct plan too
    for (bool causal : {true, false})
      for (int64_t d : {1, 2, 3})
        for (int plan : {1, 2, 3}) {
          Rng rng(static_cast<uint64_t>(d));
          const Conv1dOptions o{
              .kernel = 3, .dilation = d, .causal = causal, .lengths = kLengths, .plan = plan};
          testing::expect_gradients(
              [&](Graph&, std::vector<Var>& v) { return conv1d(v[0], v[1], v[2], o); },
              {testing::random_tensor({B, T, C}, rng), testing::random_tensor({O, 3 * C}, rng),
               testing::random_tensor({O}, rng)},
              {.eps = 1e-2f, .rtol = 1e-2f, .atol = 1e-3f});
          testing::expect_gradients(  // no bias, every position real
              [&](Graph&, std::vector<Var>& v) {
                return conv1d(v[0], v[1], Var{},
                              {.kernel = 2, .dilation = d, .causal = true, .plan = plan});
              },
              {testing::random_tensor({B, 5, C}, rng), testing::random_tensor({O, 2 * C}, rng)},
              {.eps = 1e-2f, .rtol = 1e-2f, .atol = 1e-3f});
        }
}

// WaveNet's gated activation z = tanh(W_f * x) (.) sigmoid(W_g * x), the two halves of one
// convolution's 2C outputs.
Var gated(Var x, Var w, const Conv1dOptions& o) {
  Var h = conv1d(x, w, Var{}, o);  // [B, T, 2C]
  const int64_t C = h.dim(2) / 2;
  return tanh(slice(h, 2, 0, C)) * sigmoid(slice(h, 2, C, C));
}

TEST(Conv1d, GatedBlockGradients) {
  Rng rng(4);
  testing::expect_gradients(
      [&](Graph&, std::vector<Var>& v) {
        return gated(v[0], v[1], {.kernel = 2, .dilation = 2, .lengths = kLengths});
      },
      {testing::random_tensor({3, 7, 3}, rng), testing::random_tensor({4, 2 * 3}, rng)},
      {.eps = 1e-2f, .rtol = 1e-2f, .atol = 1e-3f});
}

// A causal dilated stack (WaveNet: k 2, d 1, 2, 4, 8; receptive field 16) with a residual
// connection, and its output at t.
struct Stack {
  std::vector<Conv1dOptions> layers;
  std::vector<Tensor> weights;
  Stack(int64_t k, std::vector<int64_t> dilations, int64_t C, Rng& rng) {
    for (int64_t d : dilations) {
      layers.push_back({.kernel = k, .dilation = d, .causal = true});
      weights.push_back(testing::random_tensor({C, k * C}, rng));
    }
  }
  Tensor run(const Tensor& x) const {
    Graph g(Mode::Inference);
    Var h = g.constant(x);
    for (size_t l = 0; l < layers.size(); ++l)
      h = h + tanh(conv1d(h, g.constant(weights[l]), Var{}, layers[l]));
    return h.value().clone();
  }
};

TEST(Conv1d, CausalStackOutputsIgnoreLaterInputs) {
  Rng rng(5);
  const int64_t T = 40, C = 3;
  for (int64_t k : {2, 3}) {
    const Stack s(k, {1, 2, 4, 8}, C, rng);
    const Tensor x = testing::random_tensor({1, T, C}, rng);
    const Tensor y = s.run(x);
    for (int64_t t : {0, 7, 20, 38}) {
      Tensor x2 = x.clone();
      for (int64_t u = t + 1; u < T; ++u)
        for (int64_t c = 0; c < C; ++c) x2.data()[u * C + c] += 5.f;
      const Tensor y2 = s.run(x2);
      EXPECT_EQ(std::memcmp(y.data(), y2.data(), sizeof(float) * (t + 1) * C), 0)
          << "k " << k << ": outputs up to " << t << " changed";
      if (t + 1 < T) {
        EXPECT_NE(std::memcmp(y.data() + (t + 1) * C, y2.data() + (t + 1) * C, sizeof(float) * C),
                  0);
      }
    }
  }
}

TEST(Conv1d, ReceptiveFieldIsExact) {
  Rng rng(6);
  const int64_t T = 40, C = 2;
  for (int64_t k : {2, 3}) {
    const Stack s(k, {1, 2, 4, 8}, C, rng);
    const int64_t rf = receptive_field(s.layers);
    EXPECT_EQ(rf, 1 + (k - 1) * 15);
    const Tensor x = testing::random_tensor({1, T, C}, rng);
    const Tensor y = s.run(x);
    const int64_t t = T - 1;
    auto moved = [&](int64_t u) {  // does perturbing input u change output t?
      Tensor x2 = x.clone();
      x2.data()[u * C] += 1.f;
      const Tensor y2 = s.run(x2);
      return std::memcmp(y.data() + t * C, y2.data() + t * C, sizeof(float) * C) != 0;
    };
    EXPECT_TRUE(moved(t - rf + 1)) << "k " << k;
    EXPECT_FALSE(moved(t - rf)) << "k " << k;
  }
}

TEST(Conv1d, RefusesBadShapes) {
  Graph g(Mode::Inference);
  Var x = g.constant(Tensor::zeros(Shape{1, 4, 3}));
  EXPECT_THROW(conv1d(x, g.constant(Tensor::zeros(Shape{2, 5})), Var{}, {.kernel = 2}), Error);
  EXPECT_THROW(
      conv1d(x, g.constant(Tensor::zeros(Shape{2, 6})), Var{}, {.kernel = 2, .causal = false}),
      Error);
  EXPECT_THROW(
      conv1d(x, g.constant(Tensor::zeros(Shape{2, 6})), Var{}, {.kernel = 2, .dilation = 0}),
      Error);
}

}  // namespace
}  // namespace heed
