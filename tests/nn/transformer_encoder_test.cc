// The causal Transformer encoder a position at a time (online decoding's source, read a token at
// a time) gives the states of the whole-sequence forward pass, pre- and post-LN; an inference
// graph's encoder frees each layer's intermediates and gives a training graph's floats.
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

// Inference: each layer runs on the memory the one before used (Graph::rewind keeping its
// output), so the arena holds about one layer's blocks at the end instead of all of them; the
// states are those of a training graph (dropout 0), bit for bit.
TEST(TransformerEncoder, InferenceRunsInOneLayersMemory) {
  const int64_t N = 20, d = 32, layers = 6;  // three sequences packed, 9 + 4 + 7 positions
  ParameterStore store;
  Rng rng(5);
  const TransformerEncoder encoder({.d_model = d, .heads = 4, .ff = 64, .dropout = 0.f}, layers,
                                   Scope(store, rng, "enc"));
  Tensor x = Tensor::empty({N, d});
  for (float& v : x.span()) v = rng.normal();
  const std::vector<int32_t> lengths = {9, 4, 7};
  Graph train(Mode::Train), infer(Mode::Inference);
  const size_t train_before = train.arena().bytes_in_use();
  const Var ref = encoder.forward(train.constant(x), make_packing(train, lengths));
  const size_t train_used = train.arena().bytes_in_use() - train_before;
  const Packing p = make_packing(infer, lengths);
  const size_t infer_before = infer.arena().bytes_in_use();
  const Var y = encoder.forward(infer.constant(x), p);
  const size_t infer_used = infer.arena().bytes_in_use() - infer_before;
  ASSERT_EQ(y.shape(), ref.shape());
  for (int64_t i = 0; i < y.value().numel(); ++i)
    ASSERT_EQ(y.value().data()[i], ref.value().data()[i]) << i;
  EXPECT_LT(infer_used * 3, train_used) << infer_used << " bytes against " << train_used;
}

}  // namespace
}  // namespace heed
