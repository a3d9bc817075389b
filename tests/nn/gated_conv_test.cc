// The gated residual convolution stack (nn/gated_conv.h): WaveNet's gate and the GLU as ops equal
// tanh(a) (.) sigmoid(b) and a (.) sigmoid(b) and have finite-difference gradients; the stack's
// gradients for every parameter, with and without the 1x1 projection and weight normalisation;
// incremental generation through the per-layer queues equals the last row of the whole-prefix
// forward at every step (fast WaveNet generation, Paine et al. 2016), batched, for dilations past
// the prefix length and with the GLU; beam search's reorder moves each row's queues; a centred
// stack refuses to generate.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "heed/autograd/ops.h"
#include "heed/nn/gated_conv.h"
#include "support/gradcheck.h"

namespace heed {
namespace {

// Each gate as one op equals its formula, y = f(a) sigmoid(b), and has finite-difference
// gradients.
TEST(GatedActivation, EqualsItsFormulaAndHasGradients) {
  for (const kernels::Gate gate : {kernels::Gate::Tanh, kernels::Gate::Glu}) {
    const auto f = [gate](double a) { return gate == kernels::Gate::Tanh ? std::tanh(a) : a; };
    Rng rng(3);
    const Tensor ab = testing::random_tensor({2, 3, 8}, rng, -2.f, 2.f);
    Graph g(Mode::Inference);
    Var y = gate == kernels::Gate::Tanh ? gated_tanh(g.constant(ab)) : glu(g.constant(ab));
    ASSERT_EQ(y.shape(), (Shape{2, 3, 4}));
    for (int64_t r = 0; r < 6; ++r)
      for (int64_t c = 0; c < 4; ++c) {
        const double a = ab.data()[r * 8 + c], b = ab.data()[r * 8 + 4 + c];
        EXPECT_NEAR(y.value().data()[r * 4 + c], f(a) / (1.0 + std::exp(-b)), 2e-6);
      }
    testing::expect_gradients([gate](Graph&, std::vector<Var>& v) { return gated(v[0], gate); },
                              {testing::random_tensor({3, 5, 6}, rng, -2.f, 2.f)},
                              {.eps = 1e-2f, .rtol = 1e-2f, .atol = 1e-3f});
  }
}

GatedConvConfig config(bool projection, float scale, std::vector<int64_t> dilations) {
  return {.channels = 4,
          .kernel = 3,
          .dilations = std::move(dilations),
          .causal = true,
          .projection = projection,
          .residual_scale = scale};
}

TEST(GatedConvStack, ParameterGradients) {
  for (int variant = 0; variant < 3; ++variant) {  // plain, projection, projection + weight norm
    const bool projection = variant > 0;
    ParameterStore store;
    Rng init(5);
    GatedConvConfig c = config(projection, std::sqrt(0.5f), {1, 2});
    c.weight_norm = variant == 2;
    const GatedConvStack stack(c, Scope(store, init));
    if (c.weight_norm) {  // two layers of v, g, b for the convolution and the projection
      ASSERT_EQ(store.all().size(), 2u * 6);
    }
    Rng rng(6);
    const Tensor x = testing::random_tensor({2, 6, 4}, rng);
    const std::vector<int32_t> lengths = {6, 4};
    testing::expect_gradients(
        [&](Graph& g, std::vector<Var>& v) { return stack.forward(g, v[0], lengths); }, {x},
        {.eps = 1e-2f, .rtol = 2e-2f, .atol = 2e-3f}, {}, store.all());
  }
}

TEST(GatedConvStack, IncrementalGenerationEqualsRecomputation) {
  // plain, projection, projection + weight norm, the GLU
  for (int variant = 0; variant < 4; ++variant) {
    const bool projection = variant == 1 || variant == 2;
    ParameterStore store;
    Rng init(7);
    // dilations 1 2 4 8 16: the last layer's taps reach before the start for most of the run
    GatedConvConfig cfg = config(projection, projection ? 1.f : std::sqrt(0.5f), {1, 2, 4, 8, 16});
    cfg.weight_norm = variant == 2;
    if (variant == 3) cfg.gate = kernels::Gate::Glu;
    const GatedConvStack stack(cfg, Scope(store, init));
    if (cfg.weight_norm)  // the gains moved off their start (w = v), so g matters
      for (Parameter* p : store.all())
        if (p->name.ends_with("/g")) p->value.data()[0] *= 1.5f;
    const int64_t B = 2, T = 20, C = 4;
    Rng rng(8);
    const Tensor x = testing::random_tensor({B, T, C}, rng);
    Graph g(Mode::Inference);
    const Tensor full = stack.forward(g, g.constant(x)).value().clone();  // [B, T, C]
    GatedConvStack::Cache cache = stack.start(B);
    std::vector<float> in(static_cast<size_t>(B * C)), out(static_cast<size_t>(B * C));
    for (int64_t t = 0; t < T; ++t) {
      for (int64_t b = 0; b < B; ++b)
        for (int64_t c = 0; c < C; ++c) in[b * C + c] = x.data()[(b * T + t) * C + c];
      stack.step(cache, in.data(), out.data());
      for (int64_t b = 0; b < B; ++b)
        for (int64_t c = 0; c < C; ++c)
          ASSERT_NEAR(out[b * C + c], full.data()[(b * T + t) * C + c], 1e-5)
              << "projection " << projection << ", t " << t << ", b " << b << ", c " << c;
    }
  }
}

// int8 decoding: the steps through the weights' int8 copies stay within quantization error of
// the fp32 steps (and are not the same numbers)
TEST(GatedConvStack, Int8StepsFollowTheFp32Steps) {
  ParameterStore store;
  Rng init(10);
  GatedConvConfig c = config(true, 1.f, {1, 2, 4});
  c.channels = 32;
  c.weight_norm = true;  // the materialised g v / ||v|| quantized at start()
  const GatedConvStack stack(c, Scope(store, init));
  const int64_t B = 2, C = 32, T = 12;
  Rng rng(12);
  const Tensor x = testing::random_tensor({T, B, C}, rng);
  std::vector<std::vector<float>> fp32;
  GatedConvStack::Cache a = stack.start(B);
  std::vector<float> y(static_cast<size_t>(B * C));
  for (int64_t t = 0; t < T; ++t) {
    stack.step(a, x.data() + t * B * C, y.data());
    fp32.push_back(y);
  }
  store.quantize_for_inference();
  GatedConvStack::Cache q = stack.start(B);
  double worst = 0, moved = 0;
  for (int64_t t = 0; t < T; ++t) {
    stack.step(q, x.data() + t * B * C, y.data());
    for (int64_t n = 0; n < B * C; ++n) {
      worst = std::max(worst, std::abs(static_cast<double>(y[n]) - fp32[t][n]));
      moved += y[n] != fp32[t][n];
    }
  }
  EXPECT_LT(worst, 0.05);
  EXPECT_GT(moved, 0);
}

// Beam search's reorder: after it, row r continues the queues of row from[r], equal to a cache
// that saw row from[r]'s inputs all along.
TEST(GatedConvStack, ReorderMovesEachRowsQueues) {
  ParameterStore store;
  Rng init(13);
  GatedConvConfig c = config(false, std::sqrt(0.5f), {1, 2, 4});
  c.gate = kernels::Gate::Glu;
  const GatedConvStack stack(c, Scope(store, init));
  const int64_t B = 3, C = 4, T = 9;
  Rng rng(14);
  const Tensor x = testing::random_tensor({T, B, C}, rng);
  const std::vector<int32_t> from = {2, 0, 0};
  GatedConvStack::Cache moved = stack.start(B), direct = stack.start(B);
  std::vector<float> y(static_cast<size_t>(B * C)), z(y.size()), xd(y.size());
  for (int64_t t = 0; t < T; ++t) {
    const float* xt = x.data() + t * B * C;
    // direct's row r sees row from[r]'s inputs until step 5, then its own
    for (int64_t r = 0; r < B; ++r)
      std::copy_n(xt + (t < 5 ? from[static_cast<size_t>(r)] : r) * C, C, xd.data() + r * C);
    if (t == 5) stack.reorder(moved, from);
    stack.step(moved, xt, y.data());
    stack.step(direct, xd.data(), z.data());
    if (t < 5) continue;
    for (int64_t n = 0; n < B * C; ++n) ASSERT_NEAR(y[n], z[n], 1e-6) << "t " << t;
  }
}

TEST(GatedConvStack, CentredStacksDoNotGenerate) {
  ParameterStore store;
  Rng init(9);
  GatedConvConfig c = config(false, 1.f, {1});
  c.causal = false;
  const GatedConvStack stack(c, Scope(store, init));
  EXPECT_THROW(stack.start(1), Error);
  EXPECT_EQ(config(false, 1.f, {1, 2, 4, 8}).receptive_field(), 31);
}

}  // namespace
}  // namespace heed
