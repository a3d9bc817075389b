// Model directories and checkpoints (layout in the header).
// Leaves out: remote storage.
#include "heed/io/model_dir.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <vector>

#include "heed/io/files.h"
#include "heed/io/safetensors.h"
#include "heed/util/error.h"
#include "heed/util/json.h"

namespace fs = std::filesystem;

namespace heed {
namespace {

NamedTensors weights_of(const ParameterStore& params) {
  NamedTensors out;
  for (const Parameter* p : params.all()) out.emplace_back(p->name, p->value);
  return out;
}

}  // namespace

nlohmann::json read_json(const std::string& path) {
  std::string text = read_file(path);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    fail(path, ": not valid JSON (", e.what(), ")");
  }
  return j;
}

void save_model(const std::string& dir, const nlohmann::json& config,
                const ParameterStore& params) {
  fs::create_directories(dir);
  write_file_atomic((fs::path(dir) / "config.json").string(), config.dump(2) + "\n");
  save_weights((fs::path(dir) / "model.safetensors").string(), params);
}

void save_weights(const std::string& path, const ParameterStore& params) {
  write_safetensors(path, weights_of(params), {{"format", "heed"}});
}

void average_weights(const std::vector<std::string>& paths, const std::string& out_path) {
  check(!paths.empty(), "average: no weight files given");
  Safetensors first = read_safetensors(paths.front());
  std::map<std::string, std::vector<double>> sums;  // in double: many snapshots, no drift
  for (const auto& [name, t] : first.tensors) sums[name].assign(t.span().begin(), t.span().end());
  for (size_t f = 1; f < paths.size(); ++f) {
    Safetensors next = read_safetensors(paths[f]);
    check(next.tensors.size() == first.tensors.size(), "average: ", paths[f], " holds ",
          next.tensors.size(), " tensors, ", paths.front(), " ", first.tensors.size());
    for (const auto& [name, t] : next.tensors) {
      auto it = first.tensors.find(name);
      check(it != first.tensors.end(), "average: ", paths[f], " has tensor '", name, "' that ",
            paths.front(), " has not");
      check(it->second.shape() == t.shape(), "average: tensor '", name, "' is ", t.shape().str(),
            " in ", paths[f], " but ", it->second.shape().str(), " in ", paths.front());
      std::vector<double>& sum = sums[name];
      for (int64_t i = 0; i < t.numel(); ++i) sum[i] += t.data()[i];
    }
  }
  NamedTensors out;
  for (auto& [name, t] : first.tensors) {
    const std::vector<double>& sum = sums[name];
    for (int64_t i = 0; i < t.numel(); ++i)
      t.data()[i] = static_cast<float>(sum[i] / static_cast<double>(paths.size()));
    out.emplace_back(name, t);
  }
  write_safetensors(out_path, out, {{"format", "heed"}});
}

nlohmann::json read_config(const std::string& dir) {
  const std::string path = (fs::path(dir) / "config.json").string();
  nlohmann::json j = read_json(path);
  check_json_numbers(j, path);  // sizes and small settings only
  return j;
}

void new_model_dir(const std::string& dir, std::initializer_list<const char*> files,
                   const char* verb) {
  const fs::path out(dir);
  for (const char* f : files)
    check(!fs::exists(out / f), dir, " holds a model already (", f, "); ", verb,
          " into a new directory");
  std::error_code ec;
  fs::create_directories(out, ec);
  check(!ec && fs::is_directory(out), dir, ": cannot make the directory (", ec.message(), ")");
}

namespace {

// The file's tensor for parameter p: there, of p's shape, every value finite; or an Error.
const Tensor& checked_tensor(const std::string& path, const Safetensors& st, const Parameter& p) {
  auto it = st.tensors.find(p.name);
  check(it != st.tensors.end(), path, ": missing tensor '", p.name, "'");
  check(it->second.shape() == p.value.shape(), path, ": tensor '", p.name, "' has shape ",
        it->second.shape().str(), ", the model expects ", p.value.shape().str());
  // weights that are NaN or infinite decode to garbage without a word: refused here
  const auto values = it->second.span();
  const auto bad =
      std::find_if(values.begin(), values.end(), [](float x) { return !std::isfinite(x); });
  check(bad == values.end(), path, ": tensor '", p.name, "' holds ", *bad, " (entry ",
        bad - values.begin(), "); a model trained to NaN cannot be used");
  return it->second;
}

}  // namespace

void load_weights(const std::string& path, ParameterStore& params) {
  const Safetensors st = read_safetensors(path);
  for (const Parameter* p : params.all()) checked_tensor(path, st, *p);
  for (const auto& [name, t] : st.tensors)
    check(params.contains(name), path, ": unexpected tensor '", name,
          "' (not a parameter of this model)");
  for (Parameter* p : params.all()) p->value.copy_from(st.tensors.at(p->name));
}

int64_t load_weights_under(const std::string& path, ParameterStore& params,
                           std::span<const std::string_view> prefixes) {
  auto under = [&](std::string_view name) {
    return std::any_of(prefixes.begin(), prefixes.end(),
                       [&](std::string_view p) { return name.starts_with(p); });
  };
  const Safetensors st = read_safetensors(path);
  std::vector<std::pair<Parameter*, const Tensor*>> loads;
  for (Parameter* p : params.all())
    if (under(p->name)) loads.emplace_back(p, &checked_tensor(path, st, *p));
  for (const auto& [name, t] : st.tensors)
    check(!under(name) || params.contains(name), path, ": unexpected tensor '", name,
          "' (the model's encoder has no such parameter: the two encoders differ)");
  for (auto& [p, t] : loads) p->value.copy_from(*t);  // all checked before any is changed
  return static_cast<int64_t>(loads.size());
}

}  // namespace heed
