// Recurrent layers: padding changes nothing (a padded batch encodes each sequence exactly as
// the sequence alone, and its padding's annotations are 0), the packing is what its header says,
// the packed layer's gradients match finite differences, and the two
// initialisations start the weights as RnnInit says.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "heed/autograd/ops.h"
#include "heed/autograd/ops/packing.h"
#include "heed/nn/rnn.h"
#include "heed/util/error.h"
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
    for (int64_t t = lengths[b]; t < S; ++t)
      for (int64_t d = 0; d < Dm; ++d)
        EXPECT_EQ(batch.annotations.value().data()[(b * S + t) * Dm + d], 0.f);
    for (int64_t d = 0; d < 5; ++d) {
      EXPECT_NEAR(batch.final_fwd.value().data()[b * 5 + d], alone.final_fwd.value().data()[d],
                  1e-5f);
      EXPECT_NEAR(batch.final_bwd.value().data()[b * 5 + d], alone.final_bwd.value().data()[d],
                  1e-5f);
    }
  }
}

TEST_P(EachCell, PackedLayerGradients) {
  ParameterStore store;
  Rng rng(2);
  RnnLayer fwd(GetParam(), 3, 4, false, Scope(store, rng, "f"));
  RnnLayer bwd(GetParam(), 3, 4, true, Scope(store, rng, "b"));
  const std::vector<int32_t> lengths = {1, 3, 2};  // not sorted: the packing orders them
  const TimeMajorPacking p = time_major_packing(lengths, 3);
  std::vector<Parameter*> params(store.all().begin(), store.all().end());
  testing::expect_gradients(
      [&](Graph& g, std::vector<Var>& x) {
        Var packed = gather_rows(reshape(x[0], Shape{9, 3}), p.rows);  // [6, 3]
        auto a = fwd.forward(g, packed, p), b = bwd.forward(g, packed, p);
        return concat({a.states, b.states, a.last.h, b.last.h}, 0);
      },
      {testing::random_tensor({3, 3, 3}, rng)}, {.max_entries = 12}, {}, params);
}

TEST(TimeMajorPacking, LongestFirstAndOnlyTheRunningRows) {
  const std::vector<int32_t> lengths = {2, 4, 0, 3};
  const TimeMajorPacking p = time_major_packing(lengths, 5);
  EXPECT_EQ(p.order, (std::vector<int32_t>{1, 3, 0, 2}));
  EXPECT_EQ(p.batch_sizes, (std::vector<int64_t>{3, 3, 2, 1, 0}));
  EXPECT_EQ(p.offsets, (std::vector<int64_t>{0, 3, 6, 8, 9, 9}));
  // step t, i-th longest: padded row t B + order[i]
  EXPECT_EQ(p.rows, (std::vector<int32_t>{1, 3, 0, 5, 7, 4, 9, 11, 13}));
  EXPECT_EQ(p.N, 9);
  EXPECT_FALSE(p.dense());
  EXPECT_TRUE(time_major_packing(std::vector<int32_t>{3, 3}, 3).dense());
  EXPECT_FALSE(time_major_packing(std::vector<int32_t>{3, 3}, 4).dense());
  EXPECT_THROW(time_major_packing(std::vector<int32_t>{4}, 3), Error);
}

TEST_P(EachCell, InitialisationsStartTheWeightsAsDocumented) {
  const int64_t H = 16, In = 24, G = GetParam() == CellKind::Gru ? 3 : 4;
  for (const RnnInit init : {RnnInit::Glorot, RnnInit::Uniform}) {
    ParameterStore store;
    Rng rng(3);
    const RnnCell cell(GetParam(), In, H, Scope(store, rng, "c"), init);
    const float k = 1.f / std::sqrt(static_cast<float>(H));
    for (const Parameter* p : store.all()) {
      float lo = 0, hi = 0;
      for (int64_t i = 0; i < p->value.numel(); ++i) {
        lo = std::min(lo, p->value.data()[i]);
        hi = std::max(hi, p->value.data()[i]);
      }
      const std::string name = p->name.substr(p->name.rfind('/') + 1);
      if (init == RnnInit::Uniform) {  // every entry in [-k, k], and spread over it
        EXPECT_GE(lo, -k) << p->name;
        EXPECT_LE(hi, k) << p->name;
        EXPECT_LT(lo, -0.5f * k) << p->name;
        EXPECT_GT(hi, 0.5f * k) << p->name;
      } else if (name == "U") {  // orthogonal per gate: U_g^T U_g = I
        for (int64_t gate = 0; gate < G; ++gate)
          for (int64_t i = 0; i < H; ++i)
            for (int64_t j = 0; j < H; ++j) {
              double dot = 0;
              for (int64_t r = 0; r < H; ++r)
                dot += static_cast<double>(p->value.data()[(gate * H + r) * H + i]) *
                       p->value.data()[(gate * H + r) * H + j];
              EXPECT_NEAR(dot, i == j ? 1.0 : 0.0, 1e-4) << "gate " << gate;
            }
      } else if (name == "W") {  // Glorot: U(-b, b), b = sqrt(6 / (fan_in + fan_out))
        EXPECT_LE(std::max(-lo, hi), std::sqrt(6.f / static_cast<float>(In + G * H)));
      } else {  // biases 0, an LSTM's forget gate (its second block) 1
        for (int64_t i = 0; i < p->value.numel(); ++i)
          EXPECT_EQ(p->value.data()[i],
                    GetParam() == CellKind::Lstm && name == "b" && i >= H && i < 2 * H ? 1.f : 0.f)
              << p->name << "[" << i << "]";
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Cells, EachCell, ::testing::Values(CellKind::Gru, CellKind::Lstm),
                         [](const auto& info) {
                           return std::string(info.param == CellKind::Gru ? "gru" : "lstm");
                         });

}  // namespace
}  // namespace heed
