// train.jsonl read back: the validation records train/loop.cc writes, one JSON line per epoch
// (step, minutes, train loss, dev cross-entropy and metric, learning rate), for heed report.
// Leaves out: writing the log (train/loop.cc), records other than validation ones.
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

struct TrainingLog {
  std::string metric = "metric";  // BLEU, WER, acc, ...
  std::vector<LogRow> rows;
};

// The log at `path` (none: an empty log). A last line that is not a whole record (a run killed
// while writing it) is skipped with a warning on `warn`; any other bad line is an Error naming
// the file and line.
TrainingLog read_training_log(const std::string& path, std::ostream& warn);

}  // namespace heed::viz
