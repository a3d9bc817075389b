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
  c2.reorder(from);
  Tensor x3 = Tensor::empty({B, d});
  for (int64_t b = 0; b < B; ++b)
    for (int64_t j = 0; j < d; ++j) x3.data()[b * d + j] = x.data()[(from[b] * T + 3) * d + j];
  Var y3 = mha.self_step(g2.constant(x3), c2);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t j = 0; j < d; ++j)
      EXPECT_NEAR(y3.value().data()[b * d + j], ref.value().data()[(from[b] * T + 3) * d + j],
                  1e-5f);
}

// Beam search's use of the cache: at each step every row continues some row's history (a
// random parent; rows copied, swapped and dropped), then the rows of finished sentences leave
// (keep_rows). Each row's output equals full causal self-attention over the history it holds,
// recomputed from scratch; only slot numbers moved, never keys and values.
TEST(MultiHeadAttention, ReorderedAndDroppedCacheRowsContinueTheirHistories) {
  ParameterStore store;
  Rng init(11);
  MultiHeadAttention mha(16, 4, true, Scope(store, init));
  const int64_t d = 16, T = 8;
  int64_t B = 5;
  Rng rng(5);
  std::vector<std::vector<Tensor>> history(B);  // each row's inputs so far, [1, d] each
  Graph g(Mode::Inference);
  KvCache cache = mha.make_cache(g, B, T);
  for (int64_t t = 0; t < T; ++t) {
    if (t > 0) {
      std::vector<int32_t> from(B);
      for (int64_t b = 0; b < B; ++b) from[b] = static_cast<int32_t>(rng.below(B));
      cache.reorder(from);
      std::vector<std::vector<Tensor>> moved(B);
      for (int64_t b = 0; b < B; ++b) moved[b] = history[from[b]];
      history = std::move(moved);
    }
    if (t == 4) {  // rows 1 and 3 finish
      const std::vector<int32_t> keep = {0, 2, 4};
      cache.keep_rows(keep);
      history = {history[0], history[2], history[4]};
      B = 3;
    }
    Tensor xt = testing::random_tensor({B, d}, rng);
    for (int64_t b = 0; b < B; ++b) history[b].push_back(xt.rows(b, 1).clone());
    Var y = mha.self_step(g.constant(xt), cache);  // [B, d]
    for (int64_t b = 0; b < B; ++b) {
      const auto n = static_cast<int64_t>(history[b].size());
      Tensor seq = Tensor::empty({n, d});
      for (int64_t i = 0; i < n; ++i) std::copy_n(history[b][i].data(), d, seq.data() + i * d);
      Graph full(Mode::Inference);
      const std::vector<int32_t> len = {static_cast<int32_t>(n)};
      Var ref = mha.self(full.constant(seq), make_packing(full, len), /*causal=*/true);  // [n, d]
      for (int64_t j = 0; j < d; ++j)
        ASSERT_NEAR(y.value().data()[b * d + j], ref.value().data()[(n - 1) * d + j], 1e-5f)
            << "row " << b << ", step " << t;
    }
  }
}

}  // namespace
}  // namespace heed
