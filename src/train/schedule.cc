// Learning-rate schedules (formulas in the header).
// Leaves out: per-parameter-group rates.
#include "heed/train/schedule.h"

#include <algorithm>
#include <cmath>

#include "heed/util/json.h"

namespace heed {

float LrSchedule::lr(int64_t step) const {
  const ScheduleConfig& c = config_;
  step = std::max<int64_t>(step, 1);
  double warm = c.warmup > 0 && step < c.warmup ? static_cast<double>(step) / c.warmup : 1.0;
  switch (c.kind) {
    case ScheduleConfig::Kind::Constant:
      return static_cast<float>(c.lr * warm);
    case ScheduleConfig::Kind::StepDecay: {
      int64_t k = c.decay_every > 0 ? step / c.decay_every : 0;
      return static_cast<float>(c.lr * warm * std::pow(c.factor, static_cast<double>(k)));
    }
    case ScheduleConfig::Kind::InverseSqrt: {
      double w = static_cast<double>(std::max<int64_t>(c.warmup, 1));
      double s = static_cast<double>(step);
      return static_cast<float>(c.lr * std::min(s / w, std::sqrt(w / s)));
    }
    case ScheduleConfig::Kind::ReduceOnPlateau: {
      double r = c.lr * std::pow(c.factor, static_cast<double>(cuts_));
      return static_cast<float>(std::max<double>(r, c.min_lr) * warm);
    }
  }
  return c.lr;
}

float cooldown_factor(double progress, double fraction) {
  if (fraction <= 0) return 1.f;
  return static_cast<float>(std::clamp((1.0 - progress) / fraction, 0.0, 1.0));
}

bool LrSchedule::report(double metric) {
  if (config_.kind != ScheduleConfig::Kind::ReduceOnPlateau) return false;
  bool better = !has_best_ || (config_.higher_is_better ? metric > best_ : metric < best_);
  if (better) {
    best_ = metric;
    has_best_ = true;
    bad_ = 0;
    return false;
  }
  if (++bad_ > config_.patience) {
    ++cuts_;
    bad_ = 0;
    return true;
  }
  return false;
}

nlohmann::json LrSchedule::state() const {
  return {{"best", best_}, {"has_best", has_best_}, {"bad", bad_}, {"cuts", cuts_}};
}

void LrSchedule::load_state(const nlohmann::json& s) {
  best_ = s.at("best").get<double>();
  has_best_ = s.at("has_best").get<bool>();
  bad_ = json_integer<int>(s, "bad", "trainer_state.json's schedule");
  cuts_ = json_integer<int>(s, "cuts", "trainer_state.json's schedule");
}

}  // namespace heed
