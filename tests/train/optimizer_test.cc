// Optimisers against their update formulas, gradient clipping, and LR schedules.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "heed/autograd/ops.h"
#include "heed/train/optimizer.h"
#include "heed/train/schedule.h"
#include "heed/util/error.h"

namespace heed {
namespace {

// One parameter w = [1, -2] with gradient g = [0.5, 0.25] set by hand.
struct OneParam {
  ParameterStore store;
  Parameter* p;
  OneParam() {
    p = &store.add("w", {2});
    p->value.data()[0] = 1.f;
    p->value.data()[1] = -2.f;
  }
  void set_grad() {
    p->grad.data()[0] = 0.5f;
    p->grad.data()[1] = 0.25f;
  }
};

TEST(Optimizer, AdamFirstTwoStepsMatchTheFormula) {
  OneParam s;
  Optimizer opt({.kind = OptimizerConfig::Kind::Adam}, s.store);
  double m = 0, v = 0, w = 1.0;
  for (int t = 1; t <= 2; ++t) {
    s.set_grad();
    opt.step(0.1f);
    m = 0.9 * m + 0.1 * 0.5;
    v = 0.999 * v + 0.001 * 0.25;
    w -= 0.1 * (m / (1 - std::pow(0.9, t))) / (std::sqrt(v / (1 - std::pow(0.999, t))) + 1e-8);
    EXPECT_NEAR(s.p->value.data()[0], w, 1e-6);
    EXPECT_EQ(s.p->grad.data()[0], 0.f);  // gradients cleared after the step
  }
}

TEST(Optimizer, SgdMomentumAndDecoupledWeightDecay) {
  OneParam s;
  Optimizer sgd({.kind = OptimizerConfig::Kind::Sgd, .momentum = 0.5f}, s.store);
  s.set_grad();
  sgd.step(0.1f);  // v = 0.5, w = 1 - 0.05
  s.set_grad();
  sgd.step(0.1f);  // v = 0.25 + 0.5 = 0.75, w = 0.95 - 0.075
  EXPECT_NEAR(s.p->value.data()[0], 0.875, 1e-6);

  OneParam a, b;
  Optimizer adam({.kind = OptimizerConfig::Kind::Adam, .weight_decay = 0.1f}, a.store);
  Optimizer adamw({.kind = OptimizerConfig::Kind::AdamW, .weight_decay = 0.1f}, b.store);
  a.set_grad();
  b.set_grad();
  adam.step(0.1f);
  adamw.step(0.1f);
  // AdamW: the Adam step on g alone (= lr, sign of g at t = 1) plus lr * wd * w
  EXPECT_NEAR(b.p->value.data()[0], 1.0 - 0.1 - 0.1 * 0.1 * 1.0, 1e-5);
  EXPECT_NE(a.p->value.data()[0], b.p->value.data()[0]);
}

TEST(Optimizer, AdadeltaFirstTwoStepsMatchZeilersAlgorithm) {
  OneParam s;
  Optimizer opt({.kind = OptimizerConfig::Kind::Adadelta}, s.store);
  double eg = 0, edx = 0, w = 1.0;  // Zeiler 2012, Algorithm 1, rho 0.95, eps 1e-6
  for (int t = 1; t <= 2; ++t) {
    s.set_grad();
    opt.step(1.f);
    eg = 0.95 * eg + 0.05 * 0.25;
    const double dx = -std::sqrt(edx + 1e-6) / std::sqrt(eg + 1e-6) * 0.5;
    edx = 0.95 * edx + 0.05 * dx * dx;
    w += dx;
    EXPECT_NEAR(s.p->value.data()[0], w, 1e-7);
  }
  EXPECT_LT(s.p->value.data()[0], 1.f);  // a step against the gradient
}

// Adadelta on a row-sparse table updates the rows with a gradient only and catches the others'
// decay up later: the same weights and the same saved state as the dense update.
TEST(Optimizer, LazyAdadeltaOnSparseRowsEqualsTheDenseUpdate) {
  ParameterStore dense_store, sparse_store;
  Parameter& d = dense_store.add("t", {5, 3});
  Parameter& sp = sparse_store.add("t", {5, 3}, /*row_sparse=*/true);
  for (int64_t i = 0; i < 15; ++i) d.value.data()[i] = sp.value.data()[i] = 0.1f * i - 0.7f;
  Optimizer a({.kind = OptimizerConfig::Kind::Adadelta}, dense_store);
  Optimizer b({.kind = OptimizerConfig::Kind::Adadelta}, sparse_store);
  const std::vector<std::vector<int32_t>> rows = {{0, 3}, {3}, {1, 4}, {}, {0}, {2, 3, 4}, {0}};
  for (size_t step = 0; step < rows.size(); ++step) {
    std::vector<int32_t> touched = rows[step];
    sp.mark_rows(touched);
    for (int32_t r : touched)
      for (int64_t c = 0; c < 3; ++c)
        d.grad.data()[r * 3 + c] = sp.grad.data()[r * 3 + c] =
            std::sin(static_cast<float>(step * 7 + r * 3 + c));
    a.step(1.f);
    b.step(1.f);
    for (int64_t i = 0; i < 15; ++i)
      ASSERT_NEAR(sp.value.data()[i], d.value.data()[i], 1e-6) << "step " << step << ", " << i;
  }
  const auto da = a.state(), db = b.state();
  ASSERT_EQ(da.size(), db.size());
  for (size_t k = 0; k < da.size(); ++k)
    for (int64_t i = 0; i < 15; ++i)
      EXPECT_NEAR(db[k].second.data()[i], da[k].second.data()[i], 1e-7) << da[k].first << " " << i;
}

// Exponential smoothing against its definition, computed beside the updates in double: the
// mean of every iterate's weights while 1/t > smoothing, then s = (1 - a) s + a w. A lazy
// Adadelta table (rows without a gradient keep their weights) is smoothed in every row.
// swap_smoothed exchanges the two copies exactly, and the state carries the smoothed weights.
TEST(Optimizer, ExponentialSmoothingFollowsItsDefinition) {
  for (const auto kind : {OptimizerConfig::Kind::Adam, OptimizerConfig::Kind::Adadelta}) {
    ParameterStore store;
    Parameter& p = store.add("t", {4, 2}, /*row_sparse=*/true);
    for (int64_t i = 0; i < 8; ++i) p.value.data()[i] = 0.3f * static_cast<float>(i) - 1.f;
    const float f = 0.25f;  // 1/t above it for t < 4: the running mean first
    Optimizer opt({.kind = kind, .smoothing = f}, store);
    std::vector<double> s(8);
    for (int64_t i = 0; i < 8; ++i) s[i] = p.value.data()[i];
    for (int t = 1; t <= 9; ++t) {
      const std::vector<int32_t> rows = {t % 4};  // one row with a gradient per step
      p.mark_rows(rows);
      for (int64_t c = 0; c < 2; ++c) p.grad.data()[rows[0] * 2 + c] = std::sin(3.f * t + c);
      opt.step(0.1f);
      const double a = std::max(1.0 / t, static_cast<double>(f));
      for (int64_t i = 0; i < 8; ++i) s[i] += a * (p.value.data()[i] - s[i]);
    }
    std::vector<float> w(p.value.data(), p.value.data() + 8);
    opt.swap_smoothed();
    for (int64_t i = 0; i < 8; ++i) EXPECT_NEAR(p.value.data()[i], s[i], 1e-6) << i;
    // smoothing moved the rows the last step did not touch (their weights stood still)
    EXPECT_NE(p.value.data()[0], w[0]);
    opt.swap_smoothed();
    for (int64_t i = 0; i < 8; ++i) EXPECT_EQ(p.value.data()[i], w[i]) << i;
    bool saved = false;
    for (const auto& [name, t] : opt.state())
      if (name == "s/t") {
        saved = true;
        for (int64_t i = 0; i < 8; ++i) EXPECT_NEAR(t.data()[i], s[i], 1e-6) << i;
      }
    EXPECT_TRUE(saved);
  }
}

// A state saved without smoothing cannot be resumed with it, nor one saved with it without it:
// an error naming the file. The same setting on both sides resumes.
TEST(Optimizer, SmoothingSwitchedAcrossAResumeIsAnError) {
  for (const float saved : {0.f, 0.1f}) {
    OneParam a, b, c;
    Optimizer first({.smoothing = saved}, a.store);
    a.set_grad();
    first.step(0.1f);
    std::map<std::string, Tensor> state;
    for (const auto& [name, t] : first.state()) state[name] = t;
    Optimizer switched({.smoothing = 0.1f - saved}, b.store);
    try {
      switched.load_state(state, first.steps(), "ckpt/optimizer.safetensors");
      ADD_FAILURE() << "no error, saved with smoothing " << saved;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("ckpt/optimizer.safetensors"), std::string::npos);
      EXPECT_NE(std::string(e.what()).find(saved > 0 ? "saved with exponential smoothing"
                                                     : "saved without exponential smoothing"),
                std::string::npos)
          << e.what();
    }
    Optimizer same({.smoothing = saved}, c.store);
    EXPECT_NO_THROW(same.load_state(state, first.steps(), "ckpt/optimizer.safetensors"));
  }
}

TEST(Optimizer, AdamMinimisesAQuadratic) {
  ParameterStore store;
  Parameter& w = store.add("w", {3});
  Optimizer opt({}, store);
  Tensor target = Tensor::from({3}, std::vector<float>{1, -2, 3});
  for (int i = 0; i < 2000; ++i) {
    Graph g;
    Var d = g.param(w) - g.constant(target);
    g.backward(sum_all(d * d));
    opt.step(0.05f);
  }
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(w.value.data()[i], target.data()[i], 1e-3);
}

// Kim 2014's max-norm: after plain SGD, row 0 = (3, 4) (norm 5 > 2) becomes (1.2, 1.6); row 1 =
// (0.6, 0.8) (norm 1) stays.
TEST(Optimizer, MaxRowNormRescalesOnlyTheRowsAboveIt) {
  ParameterStore store;
  Parameter& p = store.add("W", {2, 2});
  p.max_row_norm = 2.f;
  const float start[] = {2, 4, 0.6f, 1.8f}, grad[] = {-1, 0, 0, 1};  // w - 1 * g
  for (int i = 0; i < 4; ++i) {
    p.value.data()[i] = start[i];
    p.grad.data()[i] = grad[i];
  }
  Optimizer opt({.kind = OptimizerConfig::Kind::Sgd, .momentum = 0.f}, store);
  opt.step(1.f);
  const float want[] = {1.2f, 1.6f, 0.6f, 0.8f};
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(p.value.data()[i], want[i], 1e-6) << i;
}

TEST(Optimizer, ClipGradNormScalesToTheBound) {
  ParameterStore store;
  Parameter& a = store.add("a", {2});
  Parameter& b = store.add("b", {1});
  a.grad.data()[0] = 3.f;
  a.grad.data()[1] = 0.f;
  b.grad.data()[0] = 4.f;
  EXPECT_NEAR(clip_grad_norm(store, 1.0), 5.0, 1e-6);
  EXPECT_NEAR(a.grad.data()[0], 0.6f, 1e-5);
  EXPECT_NEAR(b.grad.data()[0], 0.8f, 1e-5);
  EXPECT_NEAR(clip_grad_norm(store, 10.0), 1.0, 1e-4);  // under the bound: untouched
  EXPECT_NEAR(b.grad.data()[0], 0.8f, 1e-5);
}

// Clipping inside the update (the training loop's way) gives clip-then-step's numbers for each
// optimizer, on dense and row-sparse parameters, and leaves every gradient cleared.
TEST(Optimizer, StepWithGradScaleEqualsClipThenStep) {
  using K = OptimizerConfig::Kind;
  for (K kind : {K::Sgd, K::Adam, K::AdamW, K::Adadelta}) {
    SCOPED_TRACE(static_cast<int>(kind));
    ParameterStore s1, s2;
    for (ParameterStore* s : {&s1, &s2}) {
      s->add("dense", {3, 701});  // vectors of 16 and a tail
      s->add("rows", {4, 5}, /*row_sparse=*/true);
    }
    const OptimizerConfig c{.kind = kind, .weight_decay = 0.01f};
    Optimizer o1(c, s1), o2(c, s2);
    for (int step = 0; step < 3; ++step) {
      for (ParameterStore* s : {&s1, &s2}) {
        Parameter& d = *s->all()[0];
        for (int64_t i = 0; i < d.grad.numel(); ++i) {
          d.value.data()[i] =
              step == 0 ? std::sin(0.1f * static_cast<float>(i)) : d.value.data()[i];
          d.grad.data()[i] = std::cos(0.37f * static_cast<float>(i + step));
        }
        Parameter& r = *s->all()[1];
        const int32_t rows[] = {1, 3};
        r.mark_rows(rows);
        for (int32_t row : rows)
          for (int64_t j = 0; j < 5; ++j)
            r.grad.data()[row * 5 + j] = 0.5f * static_cast<float>(j - step);
      }
      clip_grad_norm(s1, 2.0);
      o1.step(0.01f);
      o2.step(0.01f, clip_scale(grad_norm(s2), 2.0));
      for (size_t k = 0; k < 2; ++k) {
        const Parameter &a = *s1.all()[k], &b = *s2.all()[k];
        for (int64_t i = 0; i < a.value.numel(); ++i) {
          ASSERT_NEAR(a.value.data()[i], b.value.data()[i], 1e-6f) << k << " " << i;
          ASSERT_EQ(b.grad.data()[i], 0.f) << k << " " << i;  // cleared by the step
        }
      }
    }
  }
  EXPECT_EQ(clip_scale(1.0, 2.0), 1.f);  // under the bound, or no bound: no scaling
  EXPECT_EQ(clip_scale(5.0, 0.0), 1.f);
  EXPECT_NEAR(clip_scale(5.0, 1.0), 0.2f, 1e-6f);
}

TEST(Schedule, Formulas) {
  using K = ScheduleConfig::Kind;
  LrSchedule c({.kind = K::Constant, .lr = 0.1f, .warmup = 10});
  EXPECT_NEAR(c.lr(5), 0.05f, 1e-7);
  EXPECT_NEAR(c.lr(100), 0.1f, 1e-7);
  LrSchedule s({.kind = K::StepDecay, .lr = 1.f, .decay_every = 100, .factor = 0.5f});
  EXPECT_NEAR(s.lr(99), 1.f, 1e-7);
  EXPECT_NEAR(s.lr(250), 0.25f, 1e-7);
  LrSchedule r({.kind = K::InverseSqrt, .lr = 1e-3f, .warmup = 400});
  EXPECT_NEAR(r.lr(100), 2.5e-4f, 1e-9);
  EXPECT_NEAR(r.lr(400), 1e-3f, 1e-9);
  EXPECT_NEAR(r.lr(1600), 5e-4f, 1e-9);
}

TEST(Schedule, CooldownFallsLinearlyToZeroOverTheLastShareOfTheBudget) {
  EXPECT_EQ(cooldown_factor(0.5, 0.0), 1.f);  // no cooldown
  EXPECT_EQ(cooldown_factor(0.0, 0.2), 1.f);
  EXPECT_EQ(cooldown_factor(0.8, 0.2), 1.f);  // the cooldown starts here
  EXPECT_NEAR(cooldown_factor(0.9, 0.2), 0.5f, 1e-6);
  EXPECT_NEAR(cooldown_factor(0.95, 0.2), 0.25f, 1e-6);
  EXPECT_EQ(cooldown_factor(1.0, 0.2), 0.f);
  EXPECT_EQ(cooldown_factor(1.3, 0.2), 0.f);  // past the budget (a resumed run): never negative
  EXPECT_NEAR(cooldown_factor(0.25, 1.0), 0.75f, 1e-6);  // the whole run decays
}

TEST(Schedule, ReduceOnPlateauCutsAfterPatienceAndResumes) {
  LrSchedule p({.kind = ScheduleConfig::Kind::ReduceOnPlateau,
                .lr = 1.f,
                .factor = 0.5f,
                .patience = 1,
                .min_lr = 0.3f});
  EXPECT_FALSE(p.report(5.0));
  EXPECT_FALSE(p.report(4.0));  // better
  EXPECT_FALSE(p.report(4.5));  // 1 bad: within patience
  EXPECT_TRUE(p.report(4.2));   // 2 bad: cut
  EXPECT_NEAR(p.lr(1000), 0.5f, 1e-7);
  LrSchedule q(p.config());
  q.load_state(p.state());
  EXPECT_NEAR(q.lr(1000), 0.5f, 1e-7);
  q.report(9);
  q.report(9);
  EXPECT_NEAR(q.lr(1000), 0.3f, 1e-7);  // 0.25 floored at min_lr
}

}  // namespace
}  // namespace heed
