// `heed average`: checkpoint averaging (Vaswani et al. 2017, section 6.1, "averaging the last
// 5 checkpoints"): the mean of the last N epoch snapshots a run kept with --keep-epochs, written
// as a new model directory that heed translate reads like any other.
// Leaves out: the arithmetic (io/checkpoint.h: average_weights).
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "commands.h"
#include "heed/io/model_dir.h"
#include "heed/util/error.h"

namespace fs = std::filesystem;

namespace heed::cli {

void AverageCommand::add(CLI::App& parent) {
  app = parent.add_subcommand(
      "average",
      "Average the weights of a run's last epochs (trained with --keep-epochs) into a new model");
  app->add_option("--model", model_dir, "The model directory of the run")->required();
  app->add_option("--last", last, "How many of the last kept epochs to average")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app->add_option("--out", out_dir, "The new model directory (config and vocabularies copied)")
      ->required();
}

int AverageCommand::run() const {
  const fs::path epochs = fs::path(model_dir) / "epochs";
  std::vector<std::pair<int64_t, std::string>> kept;  // (epoch, file)
  if (fs::is_directory(epochs))
    for (const auto& e : fs::directory_iterator(epochs)) {
      const std::string name = e.path().filename().string();
      int64_t k = 0;
      if (std::sscanf(name.c_str(), "epoch_%" SCNd64 ".safetensors", &k) == 1)
        kept.emplace_back(k, e.path().string());
    }
  check(!kept.empty(), "average: ", epochs.string(),
        " holds no epoch snapshots (train with --keep-epochs N)");
  std::sort(kept.begin(), kept.end());
  const size_t n = std::min(kept.size(), static_cast<size_t>(last));
  std::vector<std::string> paths;
  for (size_t i = kept.size() - n; i < kept.size(); ++i) paths.push_back(kept[i].second);
  check(fs::absolute(out_dir) != fs::absolute(model_dir),
        "average: --out must be a new directory, not the run's own");
  fs::create_directories(out_dir);
  for (const auto& e : fs::directory_iterator(model_dir))  // config, vocabularies, spm models
    if (e.is_regular_file() && e.path().filename() != "model.safetensors")
      fs::copy_file(e.path(), fs::path(out_dir) / e.path().filename(),
                    fs::copy_options::overwrite_existing);
  average_weights(paths, (fs::path(out_dir) / "model.safetensors").string());
  std::cout << "averaged epochs " << kept[kept.size() - n].first << ".." << kept.back().first
            << " of " << model_dir << " into " << out_dir << "\n";
  return 0;
}

}  // namespace heed::cli
