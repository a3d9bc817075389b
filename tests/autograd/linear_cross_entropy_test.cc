// The fused output layer and loss against the unfused pair cross_entropy(linear(x, W, b)):
// over several chunks (a tail included), with padding targets and label smoothing, the loss and
// all three gradients (accumulated onto gradients already there) equal to float rounding; in
// mixed precision, within bf16's rounding, whether dx and dW are products over every row at once
// or flushed every one or two chunks; in an inference graph the loss alone.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "heed/autograd/ops.h"
#include "heed/kernels/bf16.h"
#include "support/gradcheck.h"

namespace heed {
namespace {

constexpr int64_t kRows = 150, kVocab = 37, kDim = 12;  // 150 rows: chunks of 64, 64 and 22

struct Outcome {
  float loss;
  Tensor dx, dw, db;
};

// loss (used twice, so that every gradient accumulates a second time) of one form
// the fused op's rows per chunk and of dz per dx/dW product (0: its defaults, here one chunk
// and one product over all 150 rows)
Outcome run(bool fused, Precision p, const std::vector<Tensor>& in,
            const std::vector<int32_t>& targets, int64_t chunk = 64, int64_t flush = 0) {
  Graph g(Mode::Train);
  g.set_precision(p);
  Var x = g.variable(in[0]), w = g.variable(in[1]), b = g.variable(in[2]);
  const CrossEntropyOptions o{.ignore_index = -1, .label_smoothing = 0.1f};
  auto loss = [&](Var xi) {
    return fused ? linear_cross_entropy(xi, w, b, targets, o, chunk, flush)
                 : cross_entropy(linear(xi, w, b), targets, o);
  };
  Var l = loss(x) + loss(x * 0.5f);
  g.backward(l);
  return {l.value().data()[0], x.grad().clone(), w.grad().clone(), b.grad().clone()};
}

struct Data {
  std::vector<Tensor> in;
  std::vector<int32_t> targets;
};

Data data() {
  Rng rng(5);
  Data d{{testing::random_tensor({3, 50, kDim}, rng), testing::random_tensor({kVocab, kDim}, rng),
          testing::random_tensor({kVocab}, rng)},
         {}};
  for (int64_t i = 0; i < kRows; ++i)
    d.targets.push_back(i % 7 == 3 ? -1 : static_cast<int32_t>(rng.below(kVocab)));
  return d;
}

void expect_close(const Tensor& a, const Tensor& b, float rtol, const char* what) {
  ASSERT_EQ(a.shape(), b.shape()) << what;
  float scale = 0;
  for (float v : b.span()) scale = std::max(scale, std::abs(v));
  for (int64_t i = 0; i < a.numel(); ++i)
    ASSERT_NEAR(a.data()[i], b.data()[i], rtol * scale) << what << " entry " << i;
}

TEST(LinearCrossEntropy, EqualsTheUnfusedPair) {
  const Data d = data();
  const Outcome f = run(true, Precision::fp32, d.in, d.targets);
  const Outcome u = run(false, Precision::fp32, d.in, d.targets);
  EXPECT_NEAR(f.loss, u.loss, 1e-5 * std::abs(u.loss));
  expect_close(f.dx, u.dx, 1e-5f, "dx");
  expect_close(f.dw, u.dw, 1e-5f, "dW");
  expect_close(f.db, u.db, 1e-5f, "db");
}

TEST(LinearCrossEntropy, MixedPrecisionWithinBf16Rounding) {
  const Data d = data();
  const Outcome u = run(false, Precision::bf16, d.in, d.targets);
  const Outcome exact = run(false, Precision::fp32, d.in, d.targets);
  const Outcome once = run(true, Precision::bf16, d.in, d.targets);
  // flushes after every chunk (64, 64, the tail 22) and every two (128, then the tail alone);
  // the defaults: one chunk of 192 rows (150 padded to a multiple of 64)
  for (auto [chunk, flush] : {std::pair<int64_t, int64_t>{64, 0}, {64, 64}, {64, 128}, {0, 0}}) {
    SCOPED_TRACE(::testing::Message() << "chunk " << chunk << ", flush " << flush);
    const Outcome f = run(true, Precision::bf16, d.in, d.targets, chunk, flush);
    EXPECT_NEAR(f.loss, u.loss, 1e-5 * std::abs(u.loss));  // the same bf16 logits
    expect_close(f.dx, u.dx, 2e-2f, "dx");  // dz rounded before or after its 1/count scale
    expect_close(f.dw, u.dw, 2e-2f, "dW");
    expect_close(f.db, u.db, 1e-5f, "db");  // fp32 in both
    // the same bf16 products, split by rows: equal up to the order of fp32 sums
    expect_close(f.dx, once.dx, 1e-6f, "dx against one flush");
    expect_close(f.dw, once.dw, 1e-5f, "dW against one flush");
  }
  EXPECT_GT(std::abs(once.loss - exact.loss), 0.f);  // bf16 did round
}

TEST(LinearCrossEntropy, DefaultSplitIsEvenAndBounded) {
  const int64_t B = kernels::kBf16Rows;
  const auto ceil_div = [](int64_t a, int64_t b) { return (a + b - 1) / b; };
  for (int64_t V : {37, 8000, 18726, 1 << 20})
    for (int64_t M : {1, 63, 64, 65, 150, 447, 448, 449, 830, 900, 1795, 20000}) {
      SCOPED_TRACE(::testing::Message() << "V " << V << ", M " << M);
      const auto [R, F] = linear_cross_entropy_split(V, M);
      const int64_t most_chunk = std::max(B, (int64_t{1} << 21) / V / B * B);  // the bounds
      const int64_t most_flush = std::max(most_chunk, (int64_t{1} << 24) / V / B * B);
      EXPECT_EQ(R % B, 0);
      EXPECT_EQ(F % R, 0);
      EXPECT_LE(R, most_chunk);
      // no more flushes than the bound needs (rounding chunks up may make them a little larger than
      // it: by less than a block a chunk), nor chunks in one
      EXPECT_LE(ceil_div(M, F), ceil_div(M, most_flush));
      EXPECT_LT(F, most_flush + B * (F / R));
      EXPECT_EQ(F / R, ceil_div(std::min(F, (M + B - 1) / B * B), most_chunk));
      // even: the last flush is short by less than a block per flush
      const int64_t flushes = ceil_div(M, F);
      EXPECT_GT(M - (flushes - 1) * F, F - flushes * B * (F / R));
    }
  // V = 18.7k (Multi30k's German words): 64 rows a chunk and 896 a flush at most; 830 rows are
  // one flush (13 chunks), 900 two of at most 512 (the bound holds 896)
  EXPECT_EQ(linear_cross_entropy_split(18726, 830).chunk_rows, 64);
  EXPECT_EQ(linear_cross_entropy_split(18726, 830).flush_rows, 832);
  EXPECT_EQ(linear_cross_entropy_split(18726, 900).flush_rows, 512);
  // V = 8,000: 256 rows a chunk at most; 600 rows in three (256, 256, 88: whole blocks of 64)
  EXPECT_EQ(linear_cross_entropy_split(8000, 600).chunk_rows, 256);
  EXPECT_EQ(linear_cross_entropy_split(8000, 600).flush_rows, 768);
}

TEST(LinearCrossEntropy, InferenceGraphsGiveTheLossAlone) {
  const Data d = data();
  Graph g(Mode::Inference);
  Var x = g.constant(d.in[0]), w = g.constant(d.in[1]), b = g.constant(d.in[2]);
  const CrossEntropyOptions o{.ignore_index = -1, .label_smoothing = 0.1f};
  const float fused = linear_cross_entropy(x, w, b, d.targets, o, 64).value().data()[0];
  const float plain = cross_entropy(linear(x, w, b), d.targets, o).value().data()[0];
  EXPECT_NEAR(fused, plain, 1e-5 * std::abs(plain));
  EXPECT_THROW(linear_cross_entropy(x, w, b, d.targets, o, 50), Error);      // not a multiple of 64
  EXPECT_THROW(linear_cross_entropy(x, w, b, d.targets, o, 64, 96), Error);  // nor of the chunk
}

}  // namespace
}  // namespace heed
