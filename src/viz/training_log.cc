// Reading train.jsonl (see the header).
#include "heed/viz/training_log.h"

#include <filesystem>
#include <ostream>

#include <nlohmann/json.hpp>

#include "heed/data/text.h"
#include "heed/util/error.h"
#include "heed/util/json.h"

namespace heed::viz {

// Designated initializers leave the other members at their defaults on purpose.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

TrainingLog read_training_log(const std::string& path, std::ostream& warn) {
  TrainingLog log;
  if (!std::filesystem::exists(path)) return log;
  const std::vector<std::string> lines = read_lines(path);
  for (size_t i = 0; i < lines.size(); ++i) {
    try {
      const auto j = nlohmann::json::parse(lines[i]);
      if (!j.contains("dev_ce")) {  // a training step's
        log.steps.push_back({.step = j.at("step").get<double>(),
                             .minutes = j.at("minutes").get<double>(),
                             .train_loss = j.at("train_loss").get<double>(),
                             .lr = j.at("lr").get<double>(),
                             .grad_norm = j.value("grad_norm", -1.0),
                             .tokens_per_s = j.value("tokens_per_s", 0.0)});
        continue;
      }
      log.metric = j.value("metric", log.metric);
      log.rows.push_back(
          {.step = j.at("step").get<double>(),
           .minutes = j.at("minutes").get<double>(),
           .train_loss = j.at("train_loss").get<double>(),
           .dev_ce = j.at("dev_ce").get<double>(),
           .dev_metric = j.at("dev_metric").get<double>(),
           .lr = j.value("lr", -1.0),
           .epoch = json_integer<int>(j, "epoch", path + ":" + std::to_string(i + 1))});
    } catch (const nlohmann::json::exception& e) {
      if (i + 1 == lines.size()) {
        warn << "heed report: warning: " << path << ":" << i + 1
             << ": the last line is not a whole record (a run killed while writing it?); "
                "skipped\n";
        break;
      }
      fail(path, ":", i + 1, ": not a training record: ", e.what());
    }
  }
  return log;
}

}  // namespace heed::viz
