// Recurrent layers: padding changes nothing (a padded batch encodes each sequence exactly as
// the sequence alone), and the masked layer's gradients match finite differences.
#include <gtest/gtest.h>

#include "heed/nn/rnn.h"
#include "support/gradcheck.h"

namespace heed {
namespace {

class EachCell : public ::testing::TestWithParam<CellKind> {};

TEST_P(EachCell, PaddedBatchEncodesEachSequenceAsAlone) {
  ParameterStore store;
  Rng rng(1);
  RnnEncoder enc({.cell = GetParam(),
                  .vocab = 20,
                  .embed = 6,
                  .hidden = 5,
                  .layers = 2,
                  .bidirectional = true},
                 Scope(store, rng, "enc"));
  const int64_t S = 6;
  const std::vector<int32_t> lengths = {6, 2, 4};
  const auto B = static_cast<int64_t>(lengths.size());
  std::vector<int32_t> ids(S * B, 0);  // time-major, padding id 0
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < lengths[b]; ++t)
      ids[t * B + b] = static_cast<int32_t>(4 + rng.below(16));
  Graph g(Mode::Inference);
  auto batch = enc.forward(g, ids, S, lengths);
  const int64_t Dm = enc.annotation_dim();
  for (int64_t b = 0; b < B; ++b) {
    std::vector<int32_t> one;
    for (int64_t t = 0; t < lengths[b]; ++t) one.push_back(ids[t * B + b]);
    std::vector<int32_t> len = {lengths[b]};
    auto alone = enc.forward(g, one, lengths[b], len);
    for (int64_t t = 0; t < lengths[b]; ++t)
      for (int64_t d = 0; d < Dm; ++d)
        EXPECT_NEAR(batch.annotations.value().data()[(b * S + t) * Dm + d],
                    alone.annotations.value().data()[t * Dm + d], 1e-5f)
            << "sequence " << b << " position " << t;
    for (int64_t d = 0; d < 5; ++d) {
      EXPECT_NEAR(batch.final_fwd.value().data()[b * 5 + d], alone.final_fwd.value().data()[d],
                  1e-5f);
      EXPECT_NEAR(batch.final_bwd.value().data()[b * 5 + d], alone.final_bwd.value().data()[d],
                  1e-5f);
    }
  }
}

TEST_P(EachCell, MaskedLayerGradients) {
  ParameterStore store;
  Rng rng(2);
  RnnLayer fwd(GetParam(), 3, 4, false, Scope(store, rng, "f"));
  RnnLayer bwd(GetParam(), 3, 4, true, Scope(store, rng, "b"));
  const std::vector<int32_t> lengths = {3, 1};
  std::vector<Parameter*> params(store.all().begin(), store.all().end());
  testing::expect_gradients(
      [&](Graph& g, std::vector<Var>& x) {
        Tensor mask = step_mask(lengths, 3, g);
        auto a = fwd.forward(g, x[0], mask), b = bwd.forward(g, x[0], mask);
        return concat({a.states, b.states}, 2);
      },
      {testing::random_tensor({3, 2, 3}, rng)}, {.max_entries = 12}, {}, params);
}

INSTANTIATE_TEST_SUITE_P(Cells, EachCell, ::testing::Values(CellKind::Gru, CellKind::Lstm),
                         [](const auto& info) {
                           return std::string(info.param == CellKind::Gru ? "gru" : "lstm");
                         });

}  // namespace
}  // namespace heed
