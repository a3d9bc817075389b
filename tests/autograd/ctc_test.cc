// The CTC loss against its definition: -log of the sum, over every frame-level path that
// collapses to the labels (merge repeats, drop blanks), of the product of the softmax
// probabilities, enumerated by brute force on small cases; its gradient by finite differences;
// padding invariance, the infeasible case, the reductions and thread independence.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "heed/autograd/ops/ctc.h"
#include "heed/kernels/ctc.h"
#include "heed/kernels/parallel.h"
#include "heed/kernels/softmax.h"
#include "support/ctc_brute_force.h"
#include "support/gradcheck.h"

namespace heed {
namespace {

// One sequence: frames [T, C] of logits, labels.
struct Case {
  int64_t T;
  std::vector<int32_t> labels;
};

// The cases as one padded batch: logits [B, Tmax, C], lengths, targets [B, Lmax].
struct Batch {
  int64_t B, T, C, L;
  Tensor logits;
  std::vector<int32_t> input_lengths, targets, target_lengths;
};

Batch make_batch(const std::vector<Case>& cases, int64_t C, uint64_t seed) {
  Batch b{static_cast<int64_t>(cases.size()), 0, C, 0, {}, {}, {}, {}};
  for (const Case& c : cases) {
    b.T = std::max(b.T, c.T);
    b.L = std::max(b.L, static_cast<int64_t>(c.labels.size()));
  }
  Rng rng(seed);
  b.logits = testing::random_tensor(Shape{b.B, b.T, C}, rng, -2.f, 2.f);
  for (const Case& c : cases) {
    b.input_lengths.push_back(static_cast<int32_t>(c.T));
    b.target_lengths.push_back(static_cast<int32_t>(c.labels.size()));
    for (int64_t i = 0; i < b.L; ++i)
      b.targets.push_back(i < static_cast<int64_t>(c.labels.size()) ? c.labels[i] : 0);
  }
  return b;
}

Var loss_of(Graph& g, Var logits, const Batch& b, CtcOptions o = {}) {
  return ctc_loss(logits, b.input_lengths, b.targets, b.target_lengths, o);
}

const std::vector<Case> kCases = {
    {4, {1, 2}}, {5, {1, 1}}, {6, {1, 2, 3}}, {3, {}}, {6, {2, 2, 2}}, {1, {3}}, {6, {3, 1, 3}},
};

TEST(Ctc, EqualsTheSumOverEveryAlignment) {
  const Batch b = make_batch(kCases, 4, 1);
  Graph g(Mode::Inference);
  Var loss = loss_of(g, g.constant(b.logits), b, {.reduction = Reduction::None});
  ASSERT_EQ(loss.shape(), Shape{b.B});
  for (int64_t i = 0; i < b.B; ++i) {
    const double want = testing::ctc_brute_force_nll(b.logits.data() + i * b.T * b.C, kCases[i].T,
                                                     b.C, kCases[i].labels);
    EXPECT_NEAR(loss.value().data()[i], want, 1e-4 * std::max(1.0, want)) << "case " << i;
  }
}

TEST(Ctc, GradientMatchesFiniteDifferences) {
  const Batch b = make_batch(kCases, 4, 2);
  for (Reduction r : {Reduction::None, Reduction::Sum, Reduction::Mean}) {
    SCOPED_TRACE(static_cast<int>(r));
    testing::expect_gradients(
        [&](Graph& g, std::vector<Var>& x) { return loss_of(g, x[0], b, {.reduction = r}); },
        {b.logits}, {.eps = 1e-2f, .rtol = 2e-2f, .atol = 1e-3f, .max_entries = 200});
  }
}

// Frames and labels beyond a sequence's lengths change nothing and get no gradient.
TEST(Ctc, PaddingChangesNothing) {
  const Batch alone = make_batch({{4, {1, 2}}}, 4, 3);
  Batch padded = make_batch({{4, {1, 2}}, {6, {3, 1, 3}}}, 4, 4);
  for (int64_t t = 0; t < 4; ++t)  // sequence 0 of the padded batch = the one alone
    for (int64_t c = 0; c < 4; ++c)
      padded.logits.data()[t * 4 + c] = alone.logits.data()[t * 4 + c];
  padded.logits.data()[5 * 4 + 1] = 1e30f;  // garbage in sequence 0's padding
  padded.targets[2] = 3;                    // and in its labels' padding
  auto run = [](const Batch& b, std::vector<float>* grad) {
    Graph g(Mode::Train);
    Var x = g.variable(b.logits);
    Var loss = loss_of(g, x, b, {.reduction = Reduction::None});
    g.backward(loss, Tensor::full(loss.shape(), 1.f));
    grad->assign(x.grad().data(), x.grad().data() + 6 * 4);  // sequence 0's rows, or more
    return loss.value().data()[0];
  };
  std::vector<float> ga, gp;
  EXPECT_FLOAT_EQ(run(alone, &ga), run(padded, &gp));
  for (int64_t i = 0; i < 4 * 4; ++i) EXPECT_FLOAT_EQ(ga[i], gp[i]) << i;
  for (int64_t i = 4 * 4; i < 6 * 4; ++i) EXPECT_EQ(gp[i], 0.f) << i;
}

// Frames whose probability mass lies on a class the labels never use (logit +75: every
// reachable state's y near e^-75) underflow the normalised float recursion; those sequences are
// computed in log space instead, and stay exact: the loss against brute force in double, the
// gradient against y - the occupancy by path enumeration (d nll / d u_t(c) = y_t(c) -
// sum over the paths through c at t, weighted by their share of p(l | x)).
TEST(Ctc, FramesThatUnderflowAreComputedInLogSpace) {
  const std::vector<Case> cases = {{4, {1, 2}}, {4, {1}}, {4, {2, 2}}};
  Batch b = make_batch(cases, 4, 9);
  for (int64_t i = 0; i < b.B * b.T; ++i) b.logits.data()[i * b.C + 3] = 75.f;
  Graph g(Mode::Train);
  Var x = g.variable(b.logits);
  Var loss = loss_of(g, x, b, {.reduction = Reduction::None});
  g.backward(loss, Tensor::full(loss.shape(), 1.f));
  for (int64_t i = 0; i < b.B; ++i) {
    const float* u = b.logits.data() + i * b.T * b.C;
    const double want = testing::ctc_brute_force_nll(u, b.T, b.C, cases[i].labels);
    ASSERT_GT(want, 200.0);  // p(l | x) < e^-200: far below float
    EXPECT_NEAR(loss.value().data()[i], want, 1e-5 * want) << "case " << i;
    // the gradient by enumerating every path, in log space (double)
    std::vector<double> y(b.T * b.C), occupancy(b.T * b.C, 0.0);
    for (int64_t t = 0; t < b.T; ++t) {
      double z = 0;
      for (int64_t c = 0; c < b.C; ++c) z += std::exp(double{u[t * b.C + c]} - 75.0);
      for (int64_t c = 0; c < b.C; ++c)
        y[t * b.C + c] = double{u[t * b.C + c]} - 75.0 - std::log(z);  // log y
    }
    std::vector<std::pair<double, std::vector<int32_t>>> paths;  // (log p, path) of l's paths
    for (int64_t n = 0; n < 256; ++n) {
      std::vector<int32_t> path(4), collapsed;
      double lp = 0;
      for (int64_t t = 0, k = n; t < 4; ++t, k /= 4) {
        path[t] = static_cast<int32_t>(k % 4);
        lp += y[t * b.C + path[t]];
      }
      for (int64_t t = 0; t < 4; ++t)
        if (path[t] != 0 && (t == 0 || path[t] != path[t - 1])) collapsed.push_back(path[t]);
      if (collapsed == cases[i].labels) paths.emplace_back(lp, path);
    }
    for (const auto& [lp, path] : paths)
      for (int64_t t = 0; t < 4; ++t) occupancy[t * b.C + path[t]] += std::exp(lp + want);
    for (int64_t k = 0; k < b.T * b.C; ++k) {
      const double grad = std::exp(y[k]) - occupancy[k];
      EXPECT_NEAR(x.grad().data()[i * b.T * b.C + k], grad, 1e-4) << "case " << i << " entry " << k;
    }
  }
}

// {1, 1} needs 3 frames (a blank between the two): with 2 the loss is +inf, or 0 with
// zero_infinity; never a gradient, never NaN; the sequence is reported.
TEST(Ctc, InfeasibleSequencesAreInfiniteOrZeroAndReported) {
  const Batch b = make_batch({{2, {1, 1}}, {4, {1, 2}}}, 3, 5);
  for (bool zero : {false, true}) {
    Graph g(Mode::Train);
    Var x = g.variable(b.logits);
    std::vector<int64_t> infeasible;
    Var loss = loss_of(
        g, x, b, {.reduction = Reduction::None, .zero_infinity = zero, .infeasible = &infeasible});
    EXPECT_EQ(infeasible, std::vector<int64_t>({0}));
    if (zero)
      EXPECT_EQ(loss.value().data()[0], 0.f);
    else
      EXPECT_EQ(loss.value().data()[0], std::numeric_limits<float>::infinity());
    EXPECT_TRUE(std::isfinite(loss.value().data()[1]));
    g.backward(loss, Tensor::full(loss.shape(), 1.f));
    for (int64_t i = 0; i < b.T * b.C; ++i) EXPECT_EQ(x.grad().data()[i], 0.f);
    for (int64_t i = b.T * b.C; i < 2 * b.T * b.C; ++i)
      EXPECT_TRUE(std::isfinite(x.grad().data()[i]));
  }
}

// sum = sum_b nll_b; mean = mean_b nll_b / max(L_b, 1), as PyTorch's ctc_loss.
TEST(Ctc, ReductionsSumAndMeanOverTargetLengths) {
  const Batch b = make_batch(kCases, 4, 6);
  Graph g(Mode::Inference);
  Var x = g.constant(b.logits);
  const Tensor each = loss_of(g, x, b, {.reduction = Reduction::None}).value();
  double sum = 0, mean = 0;
  for (int64_t i = 0; i < b.B; ++i) {
    sum += each.data()[i];
    mean += each.data()[i] / std::max<double>(1, b.target_lengths[i]) / static_cast<double>(b.B);
  }
  EXPECT_NEAR(loss_of(g, x, b, {.reduction = Reduction::Sum}).value().data()[0], sum, 1e-4);
  EXPECT_NEAR(loss_of(g, x, b, {.reduction = Reduction::Mean}).value().data()[0], mean, 1e-5);
}

// Each sequence on one thread: the results are bit-identical for any thread count.
TEST(Ctc, SameBitsOnOneAndTwoThreads) {
  std::vector<Case> many;
  for (int i = 0; i < 16; ++i) many.push_back(kCases[i % kCases.size()]);
  const Batch b = make_batch(many, 4, 7);
  std::vector<std::vector<float>> out;
  for (int threads : {1, 2}) {
    set_threads(threads);
    Graph g(Mode::Train);
    Var x = g.variable(b.logits);
    Var loss = loss_of(g, x, b, {.reduction = Reduction::Mean});
    g.backward(loss);
    out.emplace_back(x.grad().data(), x.grad().data() + x.grad().numel());
    out.back().push_back(loss.value().data()[0]);
  }
  set_threads(1);
  EXPECT_EQ(out[0], out[1]);
}

// A peaky, blank-saturated model (what a recognizer with SentencePiece pieces becomes within
// its first hundred updates): labels are e^-20..e^-60 below the blank, and the paths that reach
// the end pass through states whose share of their frame is below float's range. The loss and
// gradient equal the log-space forward-backward's (ctc_alpha, ctc_state_posteriors): nll, and
// y_t(c) - sum over the states of c of gamma_t(s); the normalised recursion must not drop
// those states (it did: losses 4-60 nats high, gradients up to 1e27).
TEST(Ctc, PeakyFramesEqualTheLogSpaceForwardBackward) {
  const int64_t T = 80, C = 304, L = 15;
  for (float blank : {20.f, 30.f, 60.f}) {
    for (uint64_t seed = 1; seed <= 5; ++seed) {
      SCOPED_TRACE(::testing::Message() << "blank logit " << blank << ", seed " << seed);
      Rng rng(seed);
      std::vector<Case> cases = {{T, {}}};
      for (int64_t i = 0; i < L; ++i)
        cases[0].labels.push_back(1 + static_cast<int32_t>(rng.below(C - 1)));
      Batch b = make_batch(cases, C, seed);
      for (int64_t t = 0; t < T; ++t) {
        b.logits.data()[t * C] = blank * rng.uniform(0.5f, 1.f);
        if (rng.below(10) == 0) b.logits.data()[t * C + 1 + rng.below(C - 1)] = blank;
      }
      Graph g(Mode::Train);
      Var x = g.variable(b.logits);
      Var loss = loss_of(g, x, b, {.reduction = Reduction::None});
      g.backward(loss, Tensor::full(loss.shape(), 1.f));
      // the reference, in log space throughout
      const kernels::CtcBatch p{.B = 1,
                                .T = T,
                                .C = C,
                                .L = L,
                                .input_lengths = b.input_lengths.data(),
                                .targets = b.targets.data(),
                                .target_lengths = b.target_lengths.data(),
                                .blank = 0};
      const int64_t W = kernels::ctc_states(p);
      Tensor lp = Tensor::zeros(Shape{T, C});
      kernels::softmax_forward(b.logits.data(), {}, lp.data(), Shape{T, C}, /*log=*/true);
      std::vector<float> alpha(T * W), beta(T * W), gamma(T * W);
      float nll = 0;
      kernels::ctc_alpha(p, lp.data(), alpha.data(), &nll);
      kernels::ctc_state_posteriors(p, lp.data(), alpha.data(), &nll, beta.data(), gamma.data());
      EXPECT_NEAR(loss.value().data()[0], nll, 1e-4f * nll);
      for (int64_t t = 0; t < T; ++t) {
        std::vector<double> want(C);
        for (int64_t c = 0; c < C; ++c) want[c] = std::exp(double{lp.data()[t * C + c]});
        for (int64_t s = 0; s < 2 * L + 1; ++s)
          want[s % 2 == 0 ? 0 : cases[0].labels[s / 2]] -= gamma[t * W + s];
        for (int64_t c = 0; c < C; ++c)
          ASSERT_NEAR(x.grad().data()[t * C + c], want[c], 1e-3) << "frame " << t << " class " << c;
      }
    }
  }
}

TEST(Ctc, BadInputIsAnError) {
  const Batch b = make_batch({{4, {1, 2}}}, 3, 8);
  Graph g(Mode::Inference);
  Var x = g.constant(b.logits);
  std::vector<int32_t> blank_label = {1, 0};
  EXPECT_THROW(ctc_loss(x, b.input_lengths, blank_label, b.target_lengths), Error);
  std::vector<int32_t> too_long = {5};
  EXPECT_THROW(ctc_loss(x, too_long, b.targets, b.target_lengths), Error);
  std::vector<int32_t> big_label = {1, 3};
  EXPECT_THROW(ctc_loss(x, b.input_lengths, big_label, b.target_lengths), Error);
  EXPECT_THROW(ctc_loss(x, b.input_lengths, b.targets, b.target_lengths, {.blank = 3}), Error);
}

}  // namespace
}  // namespace heed
