// Model directories and training checkpoints.
//   model dir:  config.json (the model's typed config, as JSON), model.safetensors (weights);
//               later issues add vocabularies beside them.
//   checkpoint: a model dir plus optimizer.safetensors (moments) and trainer_state.json
//               (step, epoch, data position, RNG state, schedule state), enough to resume
//               exactly. A checkpoint directory is replaced as a whole: written to DIR.tmp,
//               then swapped in by renames, so a crash leaves either the old or the new one.
// Checkpoint averaging: the element-wise mean of the weights of several snapshots of one run
// (Vaswani et al. 2017, section 6.1: the last checkpoints averaged); `heed average`.
// Leaves out: what a config contains (each model defines its own).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "heed/autograd/parameter.h"
#include "heed/kernels/random.h"
#include "heed/train/optimizer.h"

namespace heed {

// Writes config.json and model.safetensors into dir (created if missing), each atomically.
void save_model(const std::string& dir, const nlohmann::json& config, const ParameterStore& params);
nlohmann::json read_config(const std::string& dir);
// The weights alone (a snapshot), written atomically.
void save_weights(const std::string& path, const ParameterStore& params);
// Writes the mean of the weight files `paths` to out_path. The files must hold the same tensor
// names and shapes; otherwise an Error names the file and the tensor.
void average_weights(const std::vector<std::string>& paths, const std::string& out_path);
// Loads weights into an already-built store: every parameter must be in the file with the
// same shape, and the file must hold nothing else; otherwise an Error names file and tensor.
void load_weights(const std::string& path, ParameterStore& params);

// NOLINTNEXTLINE(bugprone-exception-escape): nlohmann::json's move asserts its invariant
struct TrainerState {
  int64_t step = 0;           // optimiser updates done
  int64_t epoch = 0;          // epochs completed
  int64_t data_position = 0;  // batches of the current epoch already consumed
  Rng::State rng{};           // the trainer's RNG after the last step
  nlohmann::json schedule;    // LrSchedule::state()
  nlohmann::json extra;       // anything else the trainer keeps (best score, ...)
};

void save_checkpoint(const std::string& dir, const nlohmann::json& config,
                     const ParameterStore& params, const Optimizer& optimizer,
                     const TrainerState& state);
// True when dir (or the previous copy left by an interrupted swap) holds a checkpoint.
bool has_checkpoint(const std::string& dir);
TrainerState load_checkpoint(const std::string& dir, ParameterStore& params, Optimizer& optimizer);

}  // namespace heed
