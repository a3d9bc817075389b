// train.jsonl read back for heed report: the records train/loop.cc writes, one JSON line each —
// validations (step, minutes, train loss, dev cross-entropy and metric, learning rate) and,
// every --log-every updates, training steps (loss, learning rate, gradient norm, tokens/s; no
// dev_ce).
// Leaves out: writing the log (train/loop.cc).
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace heed::viz {

// One validation record.
struct LogRow {
  double step = 0, minutes = 0, train_loss = 0, dev_ce = 0, dev_metric = 0;
  double lr = -1;  // the rate of the next update (-1: not recorded, older runs)
  int epoch = 0;
};

// One training-step record.
struct StepRow {
  double step = 0, minutes = 0, train_loss = 0, lr = 0;
  double grad_norm = -1;  // -1: not finite
  double tokens_per_s = 0;
};

struct TrainingLog {
  std::string metric = "metric";  // BLEU, WER, acc, ...
  std::vector<LogRow> rows;       // the validations
  std::vector<StepRow> steps;     // the step records (none from runs before --log-every)
};

// The log at `path` (none: an empty log). A last line that is not a whole record (a run killed
// while writing it) is skipped with a warning on `warn`; any other bad line is an Error naming
// the file and line.
TrainingLog read_training_log(const std::string& path, std::ostream& warn);

}  // namespace heed::viz
