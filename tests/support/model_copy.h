// Test support: a copy of a model directory with some of its weights changed (a corrupt, a
// diverged or a nudged model), its safetensors' metadata kept.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <string>

#include "heed/io/safetensors.h"

namespace heed::testing {

// `from` copied to `to`, the weights named in `replaced` replaced.
inline void copy_replacing(const std::string& from, const std::string& to,
                           const std::map<std::string, Tensor>& replaced) {
  std::filesystem::copy(from, to);
  const Safetensors w = read_safetensors(from + "/model.safetensors");
  NamedTensors out;
  for (const auto& [name, t] : w.tensors)
    out.emplace_back(name, replaced.count(name) ? replaced.at(name) : t);
  write_safetensors(to + "/model.safetensors", out, w.metadata);
}

// `from` copied to `to`, each weight v of tensor `name` made f(name, v).
inline void copy_changed(const std::string& from, const std::string& to,
                         const std::function<float(const std::string&, float)>& f) {
  std::map<std::string, Tensor> changed = read_safetensors(from + "/model.safetensors").tensors;
  for (auto& [name, t] : changed)
    for (int64_t i = 0; i < t.numel(); ++i) t.data()[i] = f(name, t.data()[i]);
  copy_replacing(from, to, changed);
}

}  // namespace heed::testing
