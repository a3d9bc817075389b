// The graph itself: leaves, accumulation into parameters, inference mode, arena reuse, and
// errors that print both shapes.
#include <gtest/gtest.h>

#include <functional>
#include <limits>
#include <thread>

#include "heed/autograd/ops.h"
#include "heed/kernels/parallel.h"
#include "heed/nn/init.h"
#include "heed/util/error.h"
#include "support/gradcheck.h"

namespace heed {
namespace {

TEST(Graph, GradientsAccumulateIntoParametersAcrossGraphs) {
  ParameterStore store;
  Parameter& w = store.add("w", {2, 2});
  w.value.copy_from(Tensor::from({2, 2}, std::vector<float>{1, 2, 3, 4}));
  for (int k = 0; k < 2; ++k) {
    Graph g;
    Var x = g.input({1, 2}, std::vector<float>{1, 1});
    g.backward(sum_all(matmul(x, g.param(w))));  // d/dW sum(x W) = x^T 1 = all ones
  }
  for (float v : w.grad.span()) EXPECT_EQ(v, 2.f);  // two backward passes accumulated
  store.zero_grad();
  for (float v : w.grad.span()) EXPECT_EQ(v, 0.f);
}

// A weight's gradient from products of few rows (an RNN's steps: linear() and the LSTM cell's
// recurrent product) is put off to the end of backward() and summed in one product: it equals
// the gradient of the same graph with the weights as plain variables (summed step by step), and
// a second graph's adds to the first's.
TEST(Graph, StepsWeightGradientsAreSummedAtTheEndOfBackward) {
  constexpr int64_t H = 5, In = 3;
  Rng rng(11);
  ParameterStore store;
  Parameter& W = store.add("W", {4 * H, In});
  Parameter& U = store.add("U", {4 * H, H});
  W.value.copy_from(testing::random_tensor({4 * H, In}, rng));
  U.value.copy_from(testing::random_tensor({4 * H, H}, rng));
  const std::vector<int64_t> rows = {3, 3, 2, 1};  // a packed batch's steps
  std::vector<Tensor> xs;
  for (int64_t r : rows) xs.push_back(testing::random_tensor({r, In}, rng));
  auto run = [&](Graph& g, Var w, Var u) {
    Var h = g.constant(g.zeros(Shape{rows[0], H})), c = h;
    Var loss;
    for (size_t t = 0; t < rows.size(); ++t) {
      const Shape s{rows[t], H};
      if (h.dim(0) != rows[t]) {  // the longest sequences go on
        h = slice(h, 0, 0, rows[t]);
        c = slice(c, 0, 0, rows[t]);
      }
      const LstmState st = lstm_cell(linear(g.constant(xs[t]), w), h, c, u);
      h = st.h;
      c = st.c;
      Var term = sum_all(h * h);
      loss = t == 0 ? term : loss + term;
    }
    return loss;
  };
  for (int k = 0; k < 2; ++k) {  // two graphs: the parameters' gradients add up, 2x
    Graph deferred;
    deferred.backward(run(deferred, deferred.param(W), deferred.param(U)));
  }
  Graph plain;
  Var w = plain.variable(W.value), u = plain.variable(U.value);
  plain.backward(run(plain, w, u));
  for (int64_t i = 0; i < W.grad.numel(); ++i)
    EXPECT_NEAR(W.grad.data()[i], 2.f * w.grad().data()[i], 1e-5f) << "dW entry " << i;
  for (int64_t i = 0; i < U.grad.numel(); ++i)
    EXPECT_NEAR(U.grad.data()[i], 2.f * u.grad().data()[i], 1e-5f) << "dU entry " << i;
  float norm = 0.f;
  for (float v : U.grad.span()) norm += v * v;
  EXPECT_GT(norm, 1e-6f);  // the steps reached U
}

// A weight's transpose is made once per graph (every step of an RNN reads it), kept until
// clear(), and a product of few rows on it equals the one on the weight itself.
TEST(Graph, TransposedWeightsAreMadeOncePerGraph) {
  ParameterStore store;
  Parameter& w = store.add("w", {3, 2});  // [N, K]
  w.value.copy_from(Tensor::from({3, 2}, std::vector<float>{1, 2, 3, 4, 5, 6}));
  Graph g;
  const float* t = g.transposed_value(w);
  EXPECT_EQ(std::vector<float>(t, t + 6), (std::vector<float>{1, 3, 5, 2, 4, 6}));  // [K, N]
  EXPECT_EQ(g.transposed_value(w), t);
  Var x = g.input({2, 2}, std::vector<float>{1, -1, 0.5f, 2});
  const Tensor y = linear(x, g.param(w)).value();  // 2 rows: on the stored transpose
  EXPECT_EQ(std::vector<float>(y.span().begin(), y.span().end()),
            (std::vector<float>{-1, -1, -1, 4.5f, 9.5f, 14.5f}));
  g.clear();
  w.value.data()[0] = 7;  // the optimizer's update, between two steps' graphs
  EXPECT_EQ(g.transposed_value(w)[0], 7.f);
}

TEST(Graph, InferenceModeRecordsNoGradient) {
  ParameterStore store;
  Parameter& w = store.add("w", {3});
  Graph g(Mode::Inference);
  Var y = tanh(g.param(w) * 2.f);
  EXPECT_FALSE(y.requires_grad());
  EXPECT_THROW(g.backward(sum_all(y)), Error);
  // Dropout is the identity at inference.
  Var d = dropout(y, 0.5f);
  EXPECT_EQ(d.id(), y.id());
}

TEST(Graph, ConstantsGetNoGradient) {
  Graph g;
  Var c = g.constant(Tensor::full({2}, 3.f));
  Var v = g.variable(Tensor::full({2}, 2.f));
  g.backward(sum_all(c * v));
  EXPECT_FALSE(c.has_grad());
  EXPECT_EQ(v.grad().data()[0], 3.f);
}

TEST(Graph, ArenaIsReusedAcrossSteps) {
  // After the first step the arena holds what the step needs: no more growth.
  ParameterStore store;
  Rng rng(1);
  Parameter& w = store.add("w", {64, 64});
  initialize(w.value, Init::glorot_uniform(), rng);
  Graph g;
  size_t capacity = 0;
  for (int step = 0; step < 5; ++step) {
    Var h = g.input({8, 64}, testing::random_tensor({8, 64}, rng).span());
    for (int l = 0; l < 20; ++l) h = tanh(linear(h, g.param(w)));
    g.backward(mean_all(h));
    g.clear();
    if (step == 1) capacity = g.arena().capacity();
    if (step >= 1) {
      EXPECT_EQ(g.arena().capacity(), capacity);
    }
  }
}

TEST(Graph, RewindKeepsTheCarriedValuesAndReusesTheMemory) {
  // A recurrence h <- tanh(W h) run 50 steps, rewinding to a mark after each: same values as
  // a graph that keeps every step, and the arena stops growing after the first step.
  ParameterStore store;
  Rng rng(2);
  Parameter& w = store.add("w", {16, 16});
  initialize(w.value, Init::glorot_uniform(), rng);
  Tensor h0 = testing::random_tensor({4, 16}, rng);
  Graph keep_all(Mode::Inference), recycled(Mode::Inference);
  Var a = keep_all.input({4, 16}, h0.span()), b = recycled.input({4, 16}, h0.span());
  Var unused;  // an invalid Var in the keep list is skipped
  const Graph::Mark mark = recycled.mark();
  size_t in_use = 0;
  for (int step = 0; step < 50; ++step) {
    a = tanh(linear(a, keep_all.param(w)));
    b = tanh(linear(b, recycled.param(w)));
    recycled.rewind(mark, {&b, &unused});
    EXPECT_EQ(recycled.size(), mark.nodes + 1);
    if (step == 0) in_use = recycled.arena().bytes_in_use();
    EXPECT_EQ(recycled.arena().bytes_in_use(), in_use);
    for (int64_t i = 0; i < a.value().numel(); ++i)
      ASSERT_EQ(a.value().data()[i], b.value().data()[i]) << "step " << step;
  }
  EXPECT_GT(keep_all.arena().bytes_in_use(), 10 * in_use);
  Graph train;
  Graph::Mark m = train.mark();
  EXPECT_THROW(train.rewind(m, {}), Error);
}

// OpenMP keeps its thread count per thread: a server's decoding worker, started after --threads
// was read, would otherwise compute with every core (and spin a second thread beside the client).
TEST(Graph, AThreadThatBuildsAGraphComputesWithTheSetThreadCount) {
  const int before = threads();
  const int wanted = omp_get_num_procs() + 1;  // never the runtime's default
  set_threads(wanted);
  int untouched = 0, adopted = 0;
  std::thread([&] { untouched = threads(); }).join();
  std::thread([&] {
    Graph g(Mode::Inference);
    adopted = threads();
  }).join();
  set_threads(before);
  EXPECT_NE(untouched, wanted);  // the runtime's default: what the fix is for
  EXPECT_EQ(adopted, wanted);
}

TEST(Graph, ShapeErrorsNameBothShapes) {
  Graph g;
  Var a = g.variable(Tensor::zeros({2, 3})), b = g.variable(Tensor::zeros({4, 5}));
  try {
    matmul(a, b);
    FAIL() << "no error";
  } catch (const Error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("[2, 3]"), std::string::npos) << m;
    EXPECT_NE(m.find("[4, 5]"), std::string::npos) << m;
  }
  EXPECT_THROW(add(a, b), Error);
  EXPECT_THROW(concat({a, b}, 0), Error);
  EXPECT_THROW(embedding(b, std::vector<int32_t>{7}, {1}), Error);    // id out of range
  EXPECT_THROW(cross_entropy(a, std::vector<int32_t>{0, 3}), Error);  // target out of range
}

TEST(Graph, ReshapeAndFirstAxisSliceAreViews) {
  Graph g;
  Var x = g.variable(Tensor::from({2, 3}, std::vector<float>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(reshape(x, {3, 2}).value().data(), x.value().data());
  EXPECT_EQ(select(x, 0, 1).value().data(), x.value().data() + 3);
}

TEST(Graph, SoftmaxFullyMaskedRowIsZeroWithZeroGradient) {
  const float inf = std::numeric_limits<float>::infinity();
  Graph g;
  Var x = g.variable(Tensor::from({2, 3}, std::vector<float>{1, 2, 3, 4, 5, 6}));
  Tensor m = Tensor::from({2, 3}, std::vector<float>{0, -inf, 0, -inf, -inf, -inf});
  Var y = softmax(x, m);
  EXPECT_EQ(y.value().data()[1], 0.f);
  for (int j = 3; j < 6; ++j) EXPECT_EQ(y.value().data()[j], 0.f);
  EXPECT_NEAR(y.value().data()[0] + y.value().data()[2], 1.f, 1e-6f);
  g.backward(sum_all(y * g.constant(Tensor::from({2, 3}, std::vector<float>{1, 2, 3, 4, 5, 6}))));
  for (int j = 3; j < 6; ++j) EXPECT_EQ(x.grad().data()[j], 0.f);
  EXPECT_EQ(x.grad().data()[1], 0.f);
}

TEST(Graph, EmbeddingGradientIsRowSparse) {
  ParameterStore store;
  Parameter& table = store.add("emb", {100, 4}, /*row_sparse=*/true);
  Graph g;
  std::vector<int32_t> ids = {3, 7, 3};
  g.backward(sum_all(embedding(g.param(table), ids, {3})));
  EXPECT_EQ(table.touched.size(), 2u);
  EXPECT_EQ(table.grad.data()[3 * 4], 2.f);
  EXPECT_EQ(table.grad.data()[7 * 4], 1.f);
  EXPECT_DOUBLE_EQ(table.grad_sum_squares(), 4 * (4.0 + 1.0));
  table.zero_grad();
  EXPECT_TRUE(table.touched.empty());
  for (float v : table.grad.span()) EXPECT_EQ(v, 0.f);
}

// Two tensors of one shape dropped with one stream lose the same entries; a fresh stream, others.
// A backward's first contribution to a gradient writes it (or takes dy's memory: add, reshape)
// instead of adding to a zero-filled buffer. Each op here feeds x's gradient twice -- through
// the op and through a second use of x -- from memory that held NaN in the graph's previous
// step: an entry the first contribution leaves unwritten turns the gradient NaN, one written
// where it should have been added turns it wrong. The reference is 2x the op's gradient of x
// used once, from fresh memory.
TEST(Graph, FirstGradientContributionsOverwriteStaleMemory) {
  using Op = std::function<Var(Graph&, Var)>;  // x [2, 3, 4] -> anything
  static const std::vector<int32_t> lengths = {3, 1};
  const std::vector<std::pair<std::string, Op>> ops = {
      {"add", [](Graph&, Var x) { return add(x, tanh(x)); }},
      {"add_same_input", [](Graph&, Var x) { return add(x, x); }},
      {"sub_same_input", [](Graph&, Var x) { return sub(mul(x, x), x); }},
      {"add_broadcast", [](Graph& g, Var x) { return add(tanh(x), slice(x, 0, 0, 1)); }},
      {"mul", [](Graph&, Var x) { return mul(x, sigmoid(x)); }},
      {"div", [](Graph&, Var x) { return div(x, add(exp(x), x)); }},
      {"affine", [](Graph&, Var x) { return affine(x, 2.f, 1.f); }},
      {"reshape",
       [](Graph&, Var x) {
         return tanh(reshape(x, Shape{6, 4}));
       }},
      {"permute",
       [](Graph&, Var x) {
         return permute(x, {2, 0, 1});
       }},
      {"concat",
       [](Graph&, Var x) {
         return concat({tanh(x), x}, 1);
       }},
      {"dropout", [](Graph&, Var x) { return dropout(x, 0.3f, 42); }},
      {"relu", [](Graph&, Var x) { return relu(x); }},
      {"gated", [](Graph&, Var x) { return gated(x, kernels::Gate::Tanh); }},
      {"layer_norm",
       [](Graph& g, Var x) {
         return layer_norm(x, g.variable(Tensor::full({4}, 1.5f)), g.variable(Tensor::zeros({4})));
       }},
      {"linear_bias",
       [](Graph& g, Var x) {
         return linear(x, g.variable(Tensor::full({5, 4}, 0.25f)), g.variable(Tensor::zeros({5})));
       }},
      {"pack", [](Graph& g, Var x) { return pack(x, make_packing(g, lengths)); }},
      {"unpack",
       [](Graph& g, Var x) {
         return unpack(reshape(x, Shape{4, 6}), make_packing(g, lengths, 3));
       }},
  };
  Rng rng(7);
  const Tensor x0 = testing::random_tensor({2, 3, 4}, rng, 0.2f, 1.f);
  for (const auto& [name, op] : ops) {
    SCOPED_TRACE(name);
    // the gradient of sum(w * op(x)) with x used once, in a fresh graph
    Graph fresh(Mode::Train, 3);
    Var xf = fresh.variable(x0);
    Var yf = op(fresh, xf);
    const Tensor w = testing::random_tensor(yf.shape(), rng);
    fresh.backward(sum_all(mul(yf, fresh.constant(w))));
    // the same with x used twice, op(x) + op(x), in memory that held NaN
    Graph g(Mode::Train, 3);
    float* poison = g.arena().array<float>(100000);
    std::fill(poison, poison + 100000, std::numeric_limits<float>::quiet_NaN());
    g.clear();
    Var x = g.variable(x0);
    Var y = add(op(g, x), op(g, x));
    g.backward(sum_all(mul(y, g.constant(w))));
    for (int64_t i = 0; i < x0.numel(); ++i)
      ASSERT_NEAR(x.grad().data()[i], 2.f * xf.grad().data()[i], 1e-5f) << "entry " << i;
  }
}

TEST(Graph, DropoutWithOneStreamSharesTheMask) {
  Graph g(Mode::Train, 3);
  Var a = g.variable(Tensor::full({1000}, 1.f)), b = g.variable(Tensor::full({1000}, 2.f));
  const uint64_t s = g.next_stream();
  Var da = dropout(a, 0.3f, s), db = dropout(b, 0.3f, s), dc = dropout(b, 0.3f);
  int64_t differ = 0;
  for (int64_t i = 0; i < 1000; ++i) {
    EXPECT_EQ(da.value().data()[i] == 0.f, db.value().data()[i] == 0.f) << i;
    differ += (db.value().data()[i] == 0.f) != (dc.value().data()[i] == 0.f);
  }
  EXPECT_GT(differ, 100);
}

TEST(Graph, DropoutIsReproducibleAndScaled) {
  auto run = [](uint64_t seed) {
    Graph g(Mode::Train, seed);
    Var y = dropout(g.variable(Tensor::full({10000}, 1.f)), 0.25f);
    return y.value().clone();
  };
  Tensor a = run(5), b = run(5), c = run(6);
  int64_t kept = 0, same = 0, pairs = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    EXPECT_EQ(a.data()[i], b.data()[i]);
    EXPECT_TRUE(a.data()[i] == 0.f || std::fabs(a.data()[i] - 1.f / 0.75f) < 1e-6f);
    kept += a.data()[i] != 0.f;
    same += a.data()[i] == c.data()[i];
    pairs += i > 0 && a.data()[i] != 0.f && a.data()[i - 1] != 0.f;
  }
  EXPECT_NEAR(kept / 10000.0, 0.75, 0.02);
  // masks of two seeds, and neighbouring elements of one mask, are independent:
  // P(same) = 0.75^2 + 0.25^2, P(both kept) = 0.75^2
  EXPECT_NEAR(same / 10000.0, 0.625, 0.025);
  EXPECT_NEAR(pairs / 9999.0, 0.5625, 0.025);
}

}  // namespace
}  // namespace heed
