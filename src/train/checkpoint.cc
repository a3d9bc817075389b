// Training checkpoints (see the header).
#include "heed/train/checkpoint.h"

#include <filesystem>
#include <vector>

#include "heed/io/files.h"
#include "heed/io/model_dir.h"
#include "heed/io/safetensors.h"
#include "heed/util/error.h"
#include "heed/util/json.h"

namespace fs = std::filesystem;

namespace heed {
namespace {

// The directory to read: dir itself, or dir.old when a swap was interrupted after the first
// rename (dir moved away, dir.tmp not yet moved in).
std::string readable(const std::string& dir) {
  if (fs::exists(fs::path(dir) / "trainer_state.json")) return dir;
  if (fs::exists(fs::path(dir + ".old") / "trainer_state.json")) return dir + ".old";
  return dir;
}

}  // namespace

void save_checkpoint(const std::string& dir, const nlohmann::json& config,
                     const ParameterStore& params, const Optimizer& optimizer,
                     const TrainerState& state) {
  std::string tmp = dir + ".tmp", old = dir + ".old";
  fs::remove_all(tmp);
  save_model(tmp, config, params);
  write_safetensors((fs::path(tmp) / "optimizer.safetensors").string(), optimizer.state());
  nlohmann::json rng = nlohmann::json::array();
  for (uint64_t s : state.rng) rng.push_back(std::to_string(s));  // JSON numbers lose 64-bit ints
  nlohmann::json js = {{"step", state.step},
                       {"epoch", state.epoch},
                       {"data_position", state.data_position},
                       {"optimizer_steps", optimizer.steps()},
                       {"rng", rng},
                       {"schedule", state.schedule},
                       {"extra", state.extra}};
  write_file_atomic((fs::path(tmp) / "trainer_state.json").string(), js.dump(2) + "\n");
  // Swap: dir -> dir.old, dir.tmp -> dir, drop dir.old. Each rename is atomic.
  fs::remove_all(old);
  if (fs::exists(dir)) fs::rename(dir, old);
  fs::rename(tmp, dir);
  fs::remove_all(old);
}

bool has_checkpoint(const std::string& dir) {
  return fs::exists(fs::path(readable(dir)) / "trainer_state.json");
}

TrainerState load_checkpoint(const std::string& dir, ParameterStore& params, Optimizer& optimizer) {
  std::string src = readable(dir);
  std::string state_path = (fs::path(src) / "trainer_state.json").string();
  nlohmann::json js = read_json(state_path);
  load_weights((fs::path(src) / "model.safetensors").string(), params);
  TrainerState st;
  st.config = read_config(src);
  try {
    st.step = json_integer<int64_t>(js, "step", state_path);
    st.epoch = json_integer<int64_t>(js, "epoch", state_path);
    st.data_position = json_integer<int64_t>(js, "data_position", state_path);
    auto rng = js.at("rng").get<std::vector<std::string>>();
    check(rng.size() == st.rng.size(), state_path, ": rng must have 4 entries");
    for (size_t i = 0; i < rng.size(); ++i) st.rng[i] = std::stoull(rng[i]);
    st.schedule = js.at("schedule");
    st.extra = js.at("extra");
    std::string opt_path = (fs::path(src) / "optimizer.safetensors").string();
    optimizer.load_state(read_safetensors(opt_path).tensors,
                         json_integer<int64_t>(js, "optimizer_steps", state_path), opt_path);
  } catch (const nlohmann::json::exception& e) {
    fail(state_path, ": malformed trainer state (", e.what(), ")");
  } catch (const std::logic_error& e) {
    fail(state_path, ": malformed rng state (", e.what(), ")");
  }
  return st;
}

}  // namespace heed
