// A family added from outside heed's sources (tests/models/registered_family/): once registered,
// it is found by name, made from the model options by its own configure, trained by the one way
// in (train(), as the command line and Python train), saved, loaded and decoded through the
// registry, and taken by `heed train --model` and listed by its --help — with no edit to cli/,
// train/ or models/.
#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "commands.h"
#include "heed/decode/translator.h"
#include "heed/io/model_dir.h"
#include "heed/train/train_options.h"
#include "models/registered_family/gru_dot_family.h"
#include "support/errors.h"
#include "support/temp_dir.h"

namespace heed {
namespace {

// A copy task: sentences of 3 to 6 of 8 words, the target the source itself.
std::vector<std::string> copy_task(int n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::string> lines;
  for (int i = 0; i < n; ++i) {
    std::string s;
    const int len = 3 + static_cast<int>(rng() % 4);
    for (int t = 0; t < len; ++t) s += (t ? " w" : "w") + std::to_string(rng() % 8);
    lines.push_back(s);
  }
  return lines;
}

void write_lines(const std::string& path, const std::vector<std::string>& lines) {
  std::ofstream f(path);
  for (const auto& l : lines) f << l << '\n';
}

nlohmann::json read_json(const std::string& path) {
  std::ifstream f(path);
  return nlohmann::json::parse(f);
}

TEST(RegisteredFamily, TrainsLoadsAndDecodesThroughTheRegistry) {
  testing::register_gru_dot_family();
  testing::TempDir dir;
  const std::vector<std::string> train_lines = copy_task(600, 1), dev_lines = copy_task(40, 2);
  for (const char* side : {"src", "tgt"}) {
    write_lines(dir / (std::string("train.") + side), train_lines);
    write_lines(dir / (std::string("dev.") + side), dev_lines);
  }
  TrainOptions o;
  o.model = "test-gru-dot";
  o.shape.hidden = 32;  // its configure reads --hidden and --embed (16 unless given)
  o.seq2seq.train_src = dir / "train.src";
  o.seq2seq.train_tgt = dir / "train.tgt";
  o.seq2seq.valid_src = dir / "dev.src";
  o.seq2seq.valid_tgt = dir / "dev.tgt";
  o.seq2seq.batch_size = 16;
  o.seq2seq.epochs = 100;
  o.seq2seq.patience = 100;
  o.seq2seq.max_steps = 600;
  o.seq2seq.lr = 0.01f;
  o.seq2seq.save_dir = dir / "m";
  std::ostringstream log;
  const TrainOutcome r = train(o, log);
  EXPECT_EQ(r.loop.steps, 600) << log.str();
  EXPECT_NE(log.str().find("test-gru-dot, E 16, H 32"), std::string::npos) << log.str();
  const nlohmann::json config = read_json(dir / "m/config.json");
  EXPECT_EQ(config.at("model"), "test-gru-dot");
  EXPECT_EQ(config.at("hidden"), 32);
  // loaded through its row, it copies
  const Translator t({dir / "m"});
  const std::vector<TranslationResult> out = t.translate(dev_lines);
  int copied = 0;
  for (size_t i = 0; i < out.size(); ++i) copied += out[i].hypotheses.at(0).text == dev_lines[i];
  EXPECT_GE(copied, 36) << log.str();

  // the command line takes it by name, and lists it with its defaults
  std::vector<std::string> args = {
      "heed",          "--threads",       "1",           "train",         "--model",
      "test-gru-dot",  "--embed",         "8",           "--train-src",   dir / "train.src",
      "--train-tgt",   dir / "train.tgt", "--valid-src", dir / "dev.src", "--valid-tgt",
      dir / "dev.tgt", "--max-steps",     "3",           "--save",        dir / "cli"};
  std::vector<char*> argv;
  argv.reserve(args.size());
  for (std::string& a : args) argv.push_back(a.data());
  ::testing::internal::CaptureStdout();
  const int status = cli::run(static_cast<int>(argv.size()), argv.data());
  ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(status, 0);
  EXPECT_EQ(read_json(dir / "cli/config.json").at("embed"), 8);
  EXPECT_NE(family_help().find("test-gru-dot"), std::string::npos);
  EXPECT_NE(family_defaults().find("test-gru-dot: embed 16, hidden 16"), std::string::npos)
      << family_defaults();
}

TEST(RegisteredFamily, ANameTakenIsRefused) {
  testing::register_gru_dot_family();
  ModelFamily again = model_family("test-gru-dot");
  EXPECT_NE(testing::error_of([&] { register_model_family(again); }).find("registered already"),
            std::string::npos);
  ModelFamily rnn = model_family("rnn");
  EXPECT_NE(testing::error_of([&] { register_model_family(rnn); }).find("'rnn'"),
            std::string::npos);
}

}  // namespace
}  // namespace heed
