// `heed average`: checkpoint averaging (Vaswani et al. 2017, section 6.1, "averaging the last
// 5 checkpoints"): the mean of the last N epoch snapshots a run kept with --keep-epochs, written
// as a new model directory that heed translate reads like any other. --out is a new (or empty)
// directory, locked while it is written (io/dir_lock.h); the run's config is checked before
// anything is written, and the result is loaded before it is kept.
// Leaves out: the arithmetic (io/checkpoint.h: average_weights).
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "commands.h"
#include "heed/io/dir_lock.h"
#include "heed/io/model_dir.h"
#include "heed/models/model_files.h"
#include "heed/models/registry.h"
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

namespace {
// What a model directory holds when it holds a model or a run (heed train --save's list): a
// directory with any of them is never written into by heed average.
std::string held_model_files(const fs::path& dir) {
  std::string held;
  for (const char* f : {"model.safetensors", "config.json", "train.jsonl", "checkpoint",
                        "checkpoint.old", "checkpoint.tmp", "epochs", "src.vocab", "tgt.vocab"})
    if (fs::exists(dir / f)) held += (held.empty() ? "" : ", ") + std::string(f);
  return held;
}
}  // namespace

int AverageCommand::run() const {
  // 1. the inputs, all checked before anything is written: the run's config.json (its family
  // known), its kept epochs
  const nlohmann::json config = read_config(model_dir);
  const ModelRole role = config_family(config, model_dir).role;
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
  // 2. --out: a new directory, or an empty one, locked against other writers for the rest
  check(fs::weakly_canonical(out_dir) != fs::weakly_canonical(model_dir),
        "average: --out must be a new directory, not the run's own");
  check(!fs::exists(out_dir) || fs::is_directory(out_dir), "average: --out ", out_dir,
        ": not a directory");
  auto refuse_held = [&] {
    const std::string held = held_model_files(out_dir);
    check(held.empty(), "average: --out ", out_dir, " already holds a model (", held,
          "); give a new directory");
  };
  const DirLock lock(out_dir, "average");  // first: a directory being written says by whom
  refuse_held();
  // 3. config, vocabularies and SentencePiece models copied, the mean of the weights written;
  // the result is loaded as heed translate (classify) would, and removed if it cannot be
  std::vector<fs::path> written;
  try {
    for (const auto& e : fs::directory_iterator(model_dir))
      if (e.is_regular_file() && e.path().filename() != "model.safetensors" &&
          e.path().filename() != DirLock::kFile) {
        written.push_back(fs::path(out_dir) / e.path().filename());
        fs::copy_file(e.path(), written.back());
      }
    written.push_back(fs::path(out_dir) / "model.safetensors");
    average_weights(paths, written.back().string());
    if (role == ModelRole::Classifier)
      load_classifier(out_dir);
    else
      load_model(out_dir);
  } catch (const std::exception& e) {
    std::error_code ec;  // what this command wrote, and nothing else
    for (const fs::path& f : written) fs::remove(f, ec);
    throw Error(std::string("average: ") + e.what() + " (nothing was kept in " + out_dir + ")");
  }
  std::cout << "averaged epochs " << kept[kept.size() - n].first << ".." << kept.back().first
            << " of " << model_dir << " into " << out_dir << "\n";
  return 0;
}

}  // namespace heed::cli
