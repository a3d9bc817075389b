// The causal Transformer encoder a position at a time (online decoding's source, read a token at
// a time) gives the states of the whole-sequence forward pass, pre- and post-LN.
#include <gtest/gtest.h>

#include <vector>

#include "heed/autograd/ops/packing.h"
#include "heed/nn/transformer.h"
#include "heed/util/error.h"

namespace heed {
namespace {

TEST(TransformerEncoder, CausalStepsEqualTheWholeSequence) {
  for (NormPlacement norm : {NormPlacement::Pre, NormPlacement::Post}) {
    SCOPED_TRACE(norm == NormPlacement::Pre ? "pre-LN" : "post-LN");
    const int64_t B = 2, T = 7, d = 16;
    ParameterStore store;
    Rng rng(3);
    const TransformerLayerConfig c{
        .d_model = d, .heads = 4, .ff = 32, .dropout = 0.f, .norm = norm, .causal_encoder = true};
    const TransformerEncoder encoder(c, 3, Scope(store, rng, "enc"));
    Tensor x = Tensor::empty({B * T, d});  // packed: sequence after sequence, both of length T
    for (float& v : x.span()) v = rng.normal();
    Graph full(Mode::Inference);
    const std::vector<int32_t> lengths(B, static_cast<int32_t>(T));
    const Var ref = encoder.forward(full.constant(x), make_packing(full, lengths));  // [B T, d]
    Graph g(Mode::Inference);
    std::vector<KvCache> caches;
    for (int64_t l = 0; l < 3; ++l)
      caches.emplace_back(Tensor::zeros({T, B, d}), Tensor::zeros({T, B, d}));  // [T, B, d]
    for (int64_t t = 0; t < T; ++t) {
      Tensor xt = Tensor::empty({B, d});
      for (int64_t b = 0; b < B; ++b)
        for (int64_t j = 0; j < d; ++j) xt.data()[b * d + j] = x.data()[(b * T + t) * d + j];
      const Var y = encoder.step(g.constant(xt), caches);  // [B, d]
      for (int64_t b = 0; b < B; ++b)
        for (int64_t j = 0; j < d; ++j)
          ASSERT_NEAR(y.value().data()[b * d + j], ref.value().data()[(b * T + t) * d + j], 1e-5f)
              << "batch " << b << ", position " << t;
    }
    for (const KvCache& cache : caches) EXPECT_EQ(cache.t, T);
  }
  // a bidirectional encoder has no states for a prefix to step through
  ParameterStore store;
  Rng rng(4);
  const TransformerEncoder both({.d_model = 8, .heads = 2, .ff = 16, .dropout = 0.f}, 1,
                                Scope(store, rng, "enc"));
  Graph g(Mode::Inference);
  std::vector<KvCache> caches;
  caches.emplace_back(Tensor::zeros({4, 1, 8}), Tensor::zeros({4, 1, 8}));
  EXPECT_THROW(both.step(g.constant(Tensor::zeros({1, 8})), caches), Error);
}

}  // namespace
}  // namespace heed
