// Model directories: config.json (the model's typed config, as JSON) and model.safetensors
// (weights), each written atomically; the vocabularies and segmenters beside them are the
// data layer's (models/model_files.h reads a whole directory).
// Checkpoint averaging: the element-wise mean of the weights of several snapshots of one run
// (Vaswani et al. 2017, section 6.1: the last checkpoints averaged); `heed average`.
// Leaves out: what a config contains (each model defines its own) and training checkpoints
// (train/checkpoint.h).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "heed/autograd/parameter.h"

namespace heed {

// Writes config.json and model.safetensors into dir (created if missing), each atomically.
void save_model(const std::string& dir, const nlohmann::json& config, const ParameterStore& params);
nlohmann::json read_config(const std::string& dir);
// A directory about to receive a converted model (heed export, heed import): an Error when it
// holds any of `files` already ("DIR holds a model already (F); VERB into a new directory"),
// created when missing.
void new_model_dir(const std::string& dir, std::initializer_list<const char*> files,
                   const char* verb);
// A JSON file, or an Error naming it.
nlohmann::json read_json(const std::string& path);
// The weights alone (a snapshot), written atomically.
void save_weights(const std::string& path, const ParameterStore& params);
// Writes the mean of the weight files `paths` to out_path. The files must hold the same tensor
// names and shapes; otherwise an Error names the file and the tensor.
void average_weights(const std::vector<std::string>& paths, const std::string& out_path);
// Loads weights into an already-built store: every parameter must be in the file with the
// same shape, and the file must hold nothing else; otherwise an Error names file and tensor.
void load_weights(const std::string& path, ParameterStore& params);
// Loads the parameters whose names begin with one of `prefixes` ("encoder/") from the file,
// the others left as they are: each such parameter must be in the file with the same shape, and
// the file's tensors under the prefixes must all be parameters; otherwise an Error names file and
// tensor. Returns how many were loaded.
int64_t load_weights_under(const std::string& path, ParameterStore& params,
                           std::span<const std::string_view> prefixes);

}  // namespace heed
