// Weights prepared for decoding (ParameterStore::prepare_for_inference): linear() and the fused
// RNN cells of an inference graph multiply by the stored W^T and give the plain product's values
// (to float rounding: one GEMM against another), or by the int8 copy within its error; training
// graphs never read the copies. (The int8 GEMM itself: tests/kernels/quantize_test.cc.)
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "heed/autograd/ops.h"
#include "heed/kernels/reduce.h"
#include "heed/kernels/softmax.h"
#include "heed/nn/init.h"
#include "support/gradcheck.h"

namespace heed {
namespace {

std::vector<float> values(Var v) {
  return {v.value().span().begin(), v.value().span().end()};
}

void expect_close(const std::vector<float>& a, const std::vector<float>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) ASSERT_NEAR(a[i], b[i], 1e-5f) << "entry " << i;
}

double relative_l2(const std::vector<float>& a, const std::vector<float>& b) {
  double err = 0, norm = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    err += (a[i] - b[i]) * (a[i] - b[i]);
    norm += b[i] * b[i];
  }
  return std::sqrt(err / norm);
}

TEST(InferenceWeights, TransposedCopyIsWTAndTakesOnlyMatrices) {
  ParameterStore store;
  Rng rng(1);
  Parameter& w = store.add("w", {5, 3});
  Parameter& b = store.add("b", {5});
  Parameter& emb = store.add("emb", {7, 3}, /*row_sparse=*/true);
  initialize(w.value, Init::glorot_uniform(), rng);
  store.transpose_for_inference();
  ASSERT_TRUE(w.transposed);
  EXPECT_FALSE(b.transposed);    // vectors are not multiplied
  EXPECT_FALSE(emb.transposed);  // a table read by lookups only
  ASSERT_EQ(w.transposed->shape(), (Shape{3, 5}));
  for (int64_t n = 0; n < 5; ++n)
    for (int64_t k = 0; k < 3; ++k)
      EXPECT_EQ(w.transposed->data()[k * 5 + n], w.value.data()[n * 3 + k]);
}

TEST(InferenceWeights, LinearUsesEitherCopyAndTrainingNeither) {
  ParameterStore store;
  Rng rng(2);
  Parameter& w = store.add("w", {200, 96});
  Parameter& b = store.add("b", {200});
  initialize(w.value, Init::glorot_uniform(), rng);
  initialize(b.value, Init::uniform(0.5f), rng);
  for (int64_t M : {1, 9, 40, 400}) {  // 400 x 200: y in blocks of 128 and 72 columns
    Tensor x = testing::random_tensor({M, 96}, rng);
    auto run = [&](Mode mode, bool bias) {
      Graph g(mode);
      Var xv = g.input({M, 96}, x.span());
      return values(bias ? linear(xv, g.param(w), g.param(b)) : linear(xv, g.param(w)));
    };
    w.transposed.reset();
    const auto plain = run(Mode::Inference, true), plain_nb = run(Mode::Inference, false);
    store.transpose_for_inference();
    expect_close(run(Mode::Inference, true), plain);
    expect_close(run(Mode::Inference, false), plain_nb);
    // a training graph multiplies by W itself: poison the copy, nothing changes
    auto poison = std::make_shared<Tensor>(Tensor::zeros(Shape{96, 200}));
    poison->fill(NAN);
    w.transposed = poison;
    EXPECT_EQ(run(Mode::Train, true), plain);
    // and an inference graph does read it
    const auto poisoned = run(Mode::Inference, true);
    EXPECT_TRUE(
        std::any_of(poisoned.begin(), poisoned.end(), [](float v) { return std::isnan(v); }));
    // int8 (the int8 copy wins when both are set): within 2 % of fp32, not equal to it
    store.quantize_for_inference();
    ASSERT_TRUE(w.int8);
    EXPECT_FALSE(b.int8);  // vectors stay fp32
    const auto int8 = run(Mode::Inference, true);
    EXPECT_NE(int8, plain);
    EXPECT_LT(relative_l2(int8, plain), 0.02);
    EXPECT_EQ(run(Mode::Train, true), plain);  // training reads neither copy
    w.int8.reset();
  }
}

// best_outputs (beam search's read of the output layer, in blocks of columns) against the whole
// layer made by linear() and read by top_k and log_sum_exp: the same ids, their values and each
// row's log-sum-exp to float rounding, on each copy of W (none, the fp32 transpose, int8) and at
// row counts that make one block or several a product (2,100 columns: 512-wide reads, a last one
// cut); and a row's figures do not depend on the rows beside it. Without log_z, the same entries.
TEST(InferenceWeights, BestOutputsEqualTheWholeLayerRead) {
  ParameterStore store;
  Rng rng(4);
  const int64_t N = 2100, K = 24, k = 5, first = 3;
  Parameter& w = store.add("w", {N, K});
  Parameter& b = store.add("b", {N});
  initialize(w.value, Init::glorot_uniform(), rng);
  initialize(b.value, Init::uniform(0.5f), rng);
  for (const char* copy : {"none", "fp32", "screen", "int8"}) {
    if (copy == std::string("fp32")) store.transpose_for_inference();
    if (copy == std::string("screen")) {  // (where this CPU has no int8 kernel: fp32 again)
      w.argmax_read = true;
      store.transpose_for_inference();
      EXPECT_EQ(w.screen != nullptr, kernels::argmax_screen_available());
    }
    if (copy == std::string("int8")) store.quantize_for_inference();
    const Tensor x0 = testing::random_tensor({1, K}, rng);  // every M's row 0
    float alone = 0;                                        // its log_z with no other row
    for (int64_t M : {1, 7, 200}) {
      Tensor x = testing::random_tensor({M, K}, rng);
      std::copy(x0.data(), x0.data() + K, x.data());
      Graph g(Mode::Inference);
      Var xv = g.input({M, K}, x.span());
      const auto whole = values(linear(xv, g.param(w), g.param(b)));
      std::vector<int32_t> ids(M * k);
      std::vector<float> vals(M * k), log_z(M);
      best_outputs(xv, g.param(w), g.param(b), first, k, ids.data(), vals.data(), log_z.data());
      {  // without log_z (no exponential taken): the same entries, the same floats
        std::vector<int32_t> bare_ids(M * k);
        std::vector<float> bare_vals(M * k);
        best_outputs(xv, g.param(w), g.param(b), first, k, bare_ids.data(), bare_vals.data(),
                     nullptr);
        EXPECT_EQ(bare_ids, ids) << copy << ", " << M << " rows";
        EXPECT_EQ(bare_vals, vals) << copy << ", " << M << " rows";
        // the argmax alone (through the screen at 1 row): the best entry, the same float
        std::vector<int32_t> one_id(M);
        std::vector<float> one_val(M);
        best_outputs(xv, g.param(w), g.param(b), first, 1, one_id.data(), one_val.data(), nullptr);
        for (int64_t m = 0; m < M; ++m) {
          EXPECT_EQ(one_id[m], ids[m * k]) << copy << ", " << M << " rows, row " << m;
          EXPECT_EQ(one_val[m], vals[m * k]) << copy << ", " << M << " rows, row " << m;
        }
      }
      for (int64_t m = 0; m < M; ++m) {
        const float* row = whole.data() + m * N;
        std::vector<int32_t> want(k);
        kernels::top_k(row + first, N - first, k, want.data());
        for (int64_t i = 0; i < k; ++i) {
          ASSERT_EQ(ids[m * k + i], want[i] + first) << copy << ", " << M << " rows, row " << m;
          ASSERT_NEAR(vals[m * k + i], row[want[i] + first], 1e-5f) << copy;
        }
        ASSERT_NEAR(log_z[m], kernels::log_sum_exp(row, N), 1e-5f) << copy << ", row " << m;
      }
      if (M == 1) alone = log_z[0];
      // int8's sums are exact and its reads fixed: bit for bit whatever the batch (fp32: as
      // oneDNN's sgemm rounds at that many rows)
      if (copy == std::string("int8")) {
        EXPECT_EQ(log_z[0], alone) << M << " rows";
      }
      EXPECT_NEAR(log_z[0], alone, 1e-6f) << copy << ", " << M << " rows";
    }
  }
}

TEST(InferenceWeights, FusedCellsUseEitherCopy) {
  // GRU: the bias preloaded; LSTM: accumulated onto the preloaded input gates
  ParameterStore store;
  Rng rng(3);
  const int64_t B = 5, H = 32;
  Parameter& Ug = store.add("Ug", {3 * H, H});
  Parameter& bg = store.add("bg", {3 * H});
  Parameter& Ul = store.add("Ul", {4 * H, H});
  initialize(Ug.value, Init::glorot_uniform(), rng);
  initialize(Ul.value, Init::glorot_uniform(), rng);
  initialize(bg.value, Init::uniform(0.1f), rng);
  Tensor gx3 = testing::random_tensor({B, 3 * H}, rng),
         gx4 = testing::random_tensor({B, 4 * H}, rng);
  Tensor h = testing::random_tensor({B, H}, rng), c = testing::random_tensor({B, H}, rng);
  auto run = [&] {
    Graph g(Mode::Inference);
    Var hv = g.input({B, H}, h.span());
    std::vector<float> out =
        values(gru_cell(g.input({B, 3 * H}, gx3.span()), hv, g.param(Ug), g.param(bg)));
    LstmState l =
        lstm_cell(g.input({B, 4 * H}, gx4.span()), hv, g.input({B, H}, c.span()), g.param(Ul));
    for (Var v : {l.h, l.c}) {
      const auto more = values(v);
      out.insert(out.end(), more.begin(), more.end());
    }
    return out;
  };
  const auto plain = run();
  store.transpose_for_inference();
  ASSERT_TRUE(Ug.transposed && Ul.transposed);
  expect_close(run(), plain);
  // int8 (the int8 copy wins when both are set): within 2 % of fp32, and not equal to it
  store.quantize_for_inference();
  const auto int8 = run();
  EXPECT_NE(int8, plain);
  EXPECT_LT(relative_l2(int8, plain), 0.02);
}

}  // namespace
}  // namespace heed
