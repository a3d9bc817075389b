// Multi-head attention: finite-difference gradients of the self- and cross-attention layers
// (projections included), and cached incremental decoding equal to full recomputation.
#include <gtest/gtest.h>

#include <vector>

#include "heed/nn/multi_head_attention.h"
#include "support/gradcheck.h"

namespace heed {
namespace {

TEST(MultiHeadAttention, SelfAndCrossGradientsMatchFiniteDifferences) {
  ParameterStore store;
  Rng init(3);
  Scope root(store, init);
  MultiHeadAttention self(8, 2, true, root / "self");
  MultiHeadAttention cross(8, 2, false, root / "cross");
  Rng rng(5);
  // packed sequences: targets of lengths 4 and 2 (6 rows), sources of 5 and 3 (8 rows)
  std::vector<Tensor> in = {testing::random_tensor({6, 8}, rng),
                            testing::random_tensor({8, 8}, rng)};
  static const std::vector<int32_t> src_len = {5, 3}, tgt_len = {4, 2};
  std::vector<Parameter*> params(store.all().begin(), store.all().end());
  testing::expect_gradients(
      [&](Graph& g, std::vector<Var>& x) {
        const Packing tgt = make_packing(g, tgt_len), src = make_packing(g, src_len);
        Var h = self.self(x[0], tgt, /*causal=*/true);
        return cross.cross(h, tgt, cross.project_memory(x[1], src), src_len);
      },
      in, {.eps = 5e-3f, .rtol = 3e-2f, .atol = 2e-3f, .max_entries = 24}, {}, params);
}

// Feeding x one position at a time through the key/value cache gives, at every position, the
// row of full causal self-attention over the whole sequence; a reordered cache continues the
// rows it was given.
TEST(MultiHeadAttention, CachedStepsEqualFullRecomputation) {
  ParameterStore store;
  Rng init(7);
  MultiHeadAttention mha(16, 4, true, Scope(store, init));
  const int64_t B = 3, T = 9, d = 16;
  Rng rng(2);
  Tensor x = testing::random_tensor({B, T, d}, rng);
  Graph full(Mode::Inference);
  const std::vector<int32_t> lengths(B, static_cast<int32_t>(T));
  Var ref = mha.self(full.constant(x.reshape({B * T, d})), make_packing(full, lengths),
                     /*causal=*/true);  // [B T, d]
  Graph g(Mode::Inference);
  KvCache cache = mha.make_cache(g, B, T);
  for (int64_t t = 0; t < T; ++t) {
    Tensor xt = Tensor::empty({B, d});
    for (int64_t b = 0; b < B; ++b)
      for (int64_t j = 0; j < d; ++j) xt.data()[b * d + j] = x.data()[(b * T + t) * d + j];
    Var y = mha.self_step(g.constant(xt), cache);  // [B, d]
    for (int64_t b = 0; b < B; ++b)
      for (int64_t j = 0; j < d; ++j)
        ASSERT_NEAR(y.value().data()[b * d + j], ref.value().data()[(b * T + t) * d + j], 1e-5f)
            << "batch " << b << ", position " << t;
  }
  // beam-style reorder: row 0 continues sequence 2's cache
  Graph g2(Mode::Inference);
  KvCache c2 = mha.make_cache(g2, B, T);
  for (int64_t t = 0; t < 3; ++t) {
    Tensor xt = Tensor::empty({B, d});
    for (int64_t b = 0; b < B; ++b)
      for (int64_t j = 0; j < d; ++j) xt.data()[b * d + j] = x.data()[(b * T + t) * d + j];
    mha.self_step(g2.constant(xt), c2);
  }
  const std::vector<int32_t> from = {2, 1, 2};
  c2.reorder(from, g2);
  Tensor x3 = Tensor::empty({B, d});
  for (int64_t b = 0; b < B; ++b)
    for (int64_t j = 0; j < d; ++j) x3.data()[b * d + j] = x.data()[(from[b] * T + 3) * d + j];
  Var y3 = mha.self_step(g2.constant(x3), c2);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t j = 0; j < d; ++j)
      EXPECT_NEAR(y3.value().data()[b * d + j], ref.value().data()[(from[b] * T + 3) * d + j],
                  1e-5f);
}

}  // namespace
}  // namespace heed
