// Lin et al. 2017's self-attention: finite-difference gradients of the pooling (A and M) and of
// the penalty ||A A^T - I||_F^2, the penalty against its formula, and padding masked out.
#include <gtest/gtest.h>

#include "heed/nn/self_attention_pooling.h"
#include "support/gradcheck.h"

namespace heed {
namespace {

const std::vector<int32_t> kLengths = {5, 3, 1};  // B = 3, S = 5: odd sizes and padding

TEST(SelfAttentionPooling, GradientsOfEmbeddingAndWeights) {
  ParameterStore store;
  Rng rng(3);
  SelfAttentionPooling pool(6, 4, 3, Scope(store, rng, "p"));  // 2u = 6, d_a = 4, r = 3
  std::vector<Parameter*> params(store.all().begin(), store.all().end());
  Tensor H = testing::random_tensor(Shape{3, 5, 6}, rng);
  for (bool want_A : {false, true})
    testing::expect_gradients(
        [&](Graph& g, std::vector<Var>& x) {
          auto o = pool.forward(g, x[0], kLengths);
          return want_A ? o.A : o.M;
        },
        {H}, {.eps = 1e-2f, .rtol = 2e-2f, .atol = 1e-3f}, {}, params);
}

TEST(SelfAttentionPooling, PenaltyGradientAndValue) {
  Rng rng(4);
  Tensor logits = testing::random_tensor(Shape{2, 3, 4}, rng, -2.f, 2.f);
  // through a softmax, so that the rows are distributions as in the model
  testing::expect_gradients(
      [&](Graph& g, std::vector<Var>& x) { return attention_penalty(g, softmax(x[0])); }, {logits},
      {.eps = 1e-2f, .rtol = 2e-2f, .atol = 1e-4f});
  Graph g(Mode::Inference);
  Var A = softmax(g.constant(logits));
  const float* a = A.value().data();
  double want = 0;
  for (int b = 0; b < 2; ++b)
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) {
        double dot = 0;
        for (int t = 0; t < 4; ++t) dot += double{a[(b * 3 + i) * 4 + t]} * a[(b * 3 + j) * 4 + t];
        want += (dot - (i == j)) * (dot - (i == j));
      }
  EXPECT_NEAR(attention_penalty(g, A).value().data()[0], want / 2, 1e-5);
  // identical one-hot hops on different positions have no redundancy: P = 0
  Tensor onehot = Tensor::full(Shape{1, 2, 4}, -1e4f);
  onehot.data()[0 * 4 + 1] = onehot.data()[1 * 4 + 3] = 0.f;
  EXPECT_NEAR(attention_penalty(g, softmax(g.constant(onehot))).value().data()[0], 0.0, 1e-6);
}

TEST(SelfAttentionPooling, PaddingGetsNoWeightAndChangesNothing) {
  ParameterStore store;
  Rng rng(5);
  SelfAttentionPooling pool(4, 3, 2, Scope(store, rng, "p"));
  Tensor H = testing::random_tensor(Shape{3, 5, 4}, rng);
  Graph g(Mode::Inference);
  auto a = pool.forward(g, g.constant(H), kLengths);
  Tensor H2 = H.clone();
  for (int b = 0; b < 3; ++b)
    for (int t = kLengths[b]; t < 5; ++t)
      for (int d = 0; d < 4; ++d) H2.data()[(b * 5 + t) * 4 + d] = 100.f;  // garbage in padding
  auto c = pool.forward(g, g.constant(H2), kLengths);
  for (int b = 0; b < 3; ++b)
    for (int h = 0; h < 2; ++h) {
      double row = 0;
      for (int t = 0; t < 5; ++t) {
        const float w = a.A.value().data()[(b * 2 + h) * 5 + t];
        if (t >= kLengths[b]) {
          EXPECT_EQ(w, 0.f) << "padding weighted";
        }
        row += w;
      }
      EXPECT_NEAR(row, 1.0, 1e-5);
    }
  for (int64_t i = 0; i < a.M.value().numel(); ++i)
    EXPECT_FLOAT_EQ(a.M.value().data()[i], c.M.value().data()[i]);
}

}  // namespace
}  // namespace heed
