// The training loop and a gradient that is not finite: the step's update is skipped (the weights
// stay exactly as they were, and stay finite), the log names the step and the parameters, the
// result counts the skipped updates, training goes on afterwards; 20 such steps in a row stop the
// run with an Error naming the checkpoint.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>
#include <sstream>

#include "heed/autograd/ops.h"
#include "heed/nn/init.h"
#include "heed/train/loop.h"
#include "support/temp_dir.h"

namespace heed {
namespace {

// y = w . x fitted to 1; at the steps in `poisoned` the loss gains sqrt(w_0 - w_0): 0, whose
// gradient is inf - inf = NaN, so the loss is finite and the weights' gradient is not.
class Task final : public TrainingTask {
 public:
  Task(ParameterStore& p, std::set<int64_t> poisoned) : poisoned_(std::move(poisoned)) {
    Rng rng(1);
    w_ = &Scope(p, rng).param("w", {4}, Init::uniform(0.5f));
  }
  std::span<const int64_t> lengths() const override { return ones_; }
  std::span<const int64_t> costs() const override { return ones_; }
  BatchLoss loss(Graph& g, std::span<const size_t> /*examples*/, int64_t step) const override {
    Tensor x = g.alloc(Shape{4}), one = g.alloc(Shape{});
    for (int64_t k = 0; k < 4; ++k) x.data()[k] = 1.f;
    one.data()[0] = 1.f;
    Var w = g.param(*w_);
    Var d = sum_all(mul(w, g.constant(x))) - g.constant(one);
    Var l = mul(d, d);
    if (poisoned_.count(step)) {
      Var w0 = select(w, 0, 0);
      l = l + sqrt(w0 - w0);
    }
    steps_.insert(step);
    return {l, 1, 1.0};
  }
  Validation validate() const override { return {0.0, 0.0}; }
  std::string metric_name() const override { return "loss"; }
  bool lower_is_better() const override { return true; }
  std::string token_name() const override { return "ex"; }
  Parameter* w_;
  mutable std::set<int64_t> steps_;

 private:
  std::set<int64_t> poisoned_;
  std::vector<int64_t> ones_ = std::vector<int64_t>(8, 1);
};

LoopOptions options(const testing::TempDir& dir, int64_t steps) {
  LoopOptions o;
  o.batch_size = 8;
  o.epochs = 100;
  o.patience = 100;
  o.max_steps = steps;
  o.lr = 0.01f;
  o.save_dir = dir / "m";
  return o;
}

TEST(NonFiniteGradient, TheUpdateIsSkippedAndSaid) {
  testing::TempDir dir;
  ParameterStore params;
  Task task(params, {3});
  std::ostringstream log;
  const LoopResult r = run_training(options(dir, 6), task, params, {{"model", "test"}}, log);
  EXPECT_EQ(r.steps, 6);
  EXPECT_EQ(r.skipped_updates, 1);
  EXPECT_NE(log.str().find("step 4: the gradient's norm is"), std::string::npos) << log.str();
  EXPECT_NE(log.str().find("update skipped"), std::string::npos);
  for (int64_t k = 0; k < 4; ++k) EXPECT_TRUE(std::isfinite(task.w_->value.data()[k]));
}

TEST(NonFiniteGradient, TwentyInARowStopTheRun) {
  testing::TempDir dir;
  ParameterStore params;
  std::set<int64_t> all;
  for (int64_t s = 2; s < 40; ++s) all.insert(s);
  Task task(params, all);
  std::ostringstream log;
  try {
    run_training(options(dir, 40), task, params, {{"model", "test"}}, log);
    ADD_FAILURE() << "the run went on";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("20 steps in a row"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace heed
