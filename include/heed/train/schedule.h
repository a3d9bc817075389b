// Learning-rate schedules: constant, step decay, inverse square root with warmup, and
// reduce-on-plateau; each with an optional linear warmup, and an optional linear cooldown to 0
// over the end of the training budget.
// Leaves out: cyclic and cosine schedules.
#pragma once

#include <cstdint>

#include <nlohmann/json.hpp>

namespace heed {

struct ScheduleConfig {
  enum class Kind { Constant, StepDecay, InverseSqrt, ReduceOnPlateau };
  Kind kind = Kind::Constant;
  float lr = 1e-3f;               // the base (peak) learning rate
  int64_t warmup = 0;             // steps of linear warmup from 0 to lr
  int64_t decay_every = 0;        // StepDecay: multiply by `factor` every this many steps
  float factor = 0.5f;            // StepDecay / ReduceOnPlateau: the multiplier
  int patience = 2;               // ReduceOnPlateau: validations without improvement before a cut
  float min_lr = 0.f;             // ReduceOnPlateau: never below this
  bool higher_is_better = false;  // ReduceOnPlateau: the metric is maximised (BLEU) or not (loss)
};

class LrSchedule {
 public:
  explicit LrSchedule(const ScheduleConfig& config) : config_(config) {}

  // The learning rate for update number `step` (counted from 1).
  //   Constant:        lr
  //   StepDecay:       lr * factor^floor(step / decay_every)
  //   InverseSqrt:     lr * min(step / warmup, sqrt(warmup / step))   (Vaswani et al. 2017, eq. 3
  //                    rescaled so that the peak, at step = warmup, is lr)
  //   ReduceOnPlateau: lr * factor^(cuts so far), at least min_lr
  // and, for all but InverseSqrt, times step / warmup during the warmup.
  float lr(int64_t step) const;
  // ReduceOnPlateau: report one validation score; returns true when the rate was cut.
  bool report(double metric);

  nlohmann::json state() const;
  void load_state(const nlohmann::json& state);
  const ScheduleConfig& config() const { return config_; }

 private:
  ScheduleConfig config_;
  double best_ = 0;
  bool has_best_ = false;
  int bad_ = 0;   // validations since the last improvement
  int cuts_ = 0;  // reductions so far
};

// Warmup-stable-decay's cooldown (Hu et al. 2024, "MiniCPM"; Hägele et al. 2024, "Scaling Laws
// and Compute-Optimal Training Beyond Fixed Training Durations"): over the last `fraction` of
// the training budget the rate falls linearly to 0. `progress` in [0, 1] is the share of the
// budget spent; the rate of any schedule above is multiplied by
//   clamp((1 - progress) / fraction, 0, 1)          (1 when fraction is 0: no cooldown)
float cooldown_factor(double progress, double fraction);

}  // namespace heed
