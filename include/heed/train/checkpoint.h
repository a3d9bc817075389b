// Training checkpoints: a model directory (io/model_dir.h) plus optimizer.safetensors (the
// moments) and trainer_state.json (step, epoch, data position, RNG state, schedule state),
// enough to resume exactly. A checkpoint directory is replaced as a whole: written to DIR.tmp,
// then swapped in by renames, so a crash leaves either the old or the new one.
// Leaves out: what the loop keeps in `extra` (train/loop.cc).
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "heed/autograd/parameter.h"
#include "heed/kernels/random.h"
#include "heed/train/optimizer.h"

namespace heed {

// NOLINTNEXTLINE(bugprone-exception-escape): nlohmann::json's move asserts its invariant
struct TrainerState {
  int64_t step = 0;           // optimiser updates done
  int64_t epoch = 0;          // epochs completed
  int64_t data_position = 0;  // batches of the current epoch already consumed
  Rng::State rng{};           // the trainer's RNG after the last step
  nlohmann::json schedule;    // LrSchedule::state()
  nlohmann::json extra;       // anything else the trainer keeps (best score, ...)
  nlohmann::json config;      // load_checkpoint: the model config the checkpoint was saved with
};

void save_checkpoint(const std::string& dir, const nlohmann::json& config,
                     const ParameterStore& params, const Optimizer& optimizer,
                     const TrainerState& state);
// True when dir (or the previous copy left by an interrupted swap) holds a checkpoint.
bool has_checkpoint(const std::string& dir);
TrainerState load_checkpoint(const std::string& dir, ParameterStore& params, Optimizer& optimizer);

}  // namespace heed
