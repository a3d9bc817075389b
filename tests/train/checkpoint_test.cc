// Training checkpoints: a checkpoint replaced by a new one, or caught between the two renames of
// its swap, still loads with its trainer state.
#include "heed/train/checkpoint.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "heed/nn/init.h"
#include "support/temp_dir.h"

namespace fs = std::filesystem;

namespace heed {
namespace {

using testing::TempDir;

void build(ParameterStore& s, Rng& rng) {
  Scope root(s, rng, "model");
  root.param("encoder/embed", {3, 4}, Init::normal(1.f), true);
  root.param("out/b", {5}, Init::uniform(0.1f));
}

TEST(Checkpoint, InterruptedSwapStillLoads) {
  TempDir dir;
  Rng rng(5);
  ParameterStore a;
  build(a, rng);
  Optimizer opt({}, a);
  TrainerState st;
  st.step = 42;
  st.rng = rng.state();
  st.schedule = nlohmann::json::object();
  std::string ck = dir / "ckpt";
  save_checkpoint(ck, {{"k", 1}}, a, opt, st);
  save_checkpoint(ck, {{"k", 1}}, a, opt, st);  // replacing an existing one
  // A crash between the two renames leaves only ckpt.old (and a stale ckpt.tmp).
  fs::rename(ck, ck + ".old");
  fs::create_directories(ck + ".tmp");
  EXPECT_TRUE(has_checkpoint(ck));
  ParameterStore b;
  build(b, rng);
  Optimizer opt2({}, b);
  TrainerState got = load_checkpoint(ck, b, opt2);
  EXPECT_EQ(got.step, 42);
  EXPECT_EQ(got.rng, st.rng);
  EXPECT_EQ(got.config, (nlohmann::json{{"k", 1}}));  // read from where the state was
  EXPECT_FALSE(has_checkpoint(dir / "elsewhere"));
}

}  // namespace
}  // namespace heed
