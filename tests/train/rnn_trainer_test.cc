// The trainer end to end on small files: it learns, writes a loadable model directory, and a
// run stopped part-way and resumed from its checkpoint ends with the same weights as a run
// that never stopped. Bad input files fail with their name.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "heed/io/checkpoint.h"
#include "heed/io/safetensors.h"
#include "heed/kernels/random.h"
#include "heed/train/rnn_trainer.h"
#include "support/errors.h"

namespace fs = std::filesystem;

namespace heed {
namespace {

struct Dataset {
  fs::path dir = fs::temp_directory_path() / ("heed_trainer_" + std::to_string(::getpid()));
  Dataset() {
    fs::remove_all(dir);
    fs::create_directories(dir);
    write("train", 600, 1);
    write("valid", 40, 2);
  }
  ~Dataset() { fs::remove_all(dir); }
  // Reversal of random letter words, as parallel text.
  void write(const std::string& name, int n, uint64_t seed) {
    Rng rng(seed);
    std::ofstream s(dir / (name + ".src")), t(dir / (name + ".tgt"));
    for (int i = 0; i < n; ++i) {
      std::vector<std::string> w;
      for (int64_t k = 0, len = 2 + rng.below(4); k < len; ++k)
        w.emplace_back(1, static_cast<char>('a' + rng.below(8)));
      for (size_t k = 0; k < w.size(); ++k) s << (k ? " " : "") << w[k];
      for (size_t k = 0; k < w.size(); ++k) t << (k ? " " : "") << w[w.size() - 1 - k];
      s << "\n";
      t << "\n";
    }
  }
  RnnTrainConfig config(const std::string& save) const {
    RnnTrainConfig c;
    c.train_src = (dir / "train.src").string();
    c.train_tgt = (dir / "train.tgt").string();
    c.valid_src = (dir / "valid.src").string();
    c.valid_tgt = (dir / "valid.tgt").string();
    c.model.encoder = {.embed = 16, .hidden = 16};
    c.model.tgt_embed = 16;
    c.model.dec_hidden = 32;
    c.model.attn_dim = 16;
    c.model.dropout = 0.1f;
    c.batch_size = 16;
    c.epochs = 2;
    c.lr = 5e-3f;
    c.checkpoint_every = 7;
    c.save_dir = (dir / save).string();
    return c;
  }
};

Safetensors weights(const std::string& dir) {
  return read_safetensors((fs::path(dir) / "checkpoint" / "model.safetensors").string());
}

TEST(RnnTrainer, StoppedAndResumedRunEqualsUninterruptedRun) {
  Dataset d;
  std::ostringstream log;
  RnnTrainResult straight = train_rnn(d.config("a"), log);
  EXPECT_EQ(straight.steps, 2 * 38);  // 600 pairs / 16 = 38 batches per epoch

  RnnTrainConfig first = d.config("b");
  first.max_steps = 45;  // stops inside the second epoch
  train_rnn(first, log);
  RnnTrainConfig rest = d.config("b");
  rest.resume = true;
  RnnTrainResult resumed = train_rnn(rest, log);
  EXPECT_EQ(resumed.steps, straight.steps);
  Safetensors a = weights(d.config("a").save_dir), b = weights(d.config("b").save_dir);
  ASSERT_EQ(a.tensors.size(), b.tensors.size());
  for (const auto& [name, t] : a.tensors)
    EXPECT_EQ(std::memcmp(t.data(), b.tensors.at(name).data(), t.numel() * 4), 0) << name;
}

TEST(RnnTrainer, ValidationInsideEpochsChangesNoTrainingStep) {
  // --valid-every validates (and may save the best model) mid-epoch; the weights after training
  // must equal those of a run that validates at epoch ends only, also across a resume.
  Dataset d;
  std::ostringstream log, every_log;
  train_rnn(d.config("a"), log);
  RnnTrainConfig first = d.config("b");
  first.valid_every = 10;
  first.max_steps = 45;
  train_rnn(first, every_log);
  RnnTrainConfig rest = first;
  rest.max_steps = 0;
  rest.resume = true;
  train_rnn(rest, every_log);
  // 76 steps: mid-epoch validations at 10, 20, 30 / 40, 50, 60, 70 and the stop at 45
  size_t count = 0;
  for (size_t p = 0; (p = every_log.str().find("validation  epoch", p)) != std::string::npos; ++p)
    ++count;
  EXPECT_EQ(count, 10u) << every_log.str();
  Safetensors a = weights(d.config("a").save_dir), b = weights(d.config("b").save_dir);
  for (const auto& [name, t] : a.tensors)
    EXPECT_EQ(std::memcmp(t.data(), b.tensors.at(name).data(), t.numel() * 4), 0) << name;
}

TEST(RnnTrainer, LearnsAndWritesALoadableModel) {
  Dataset d;
  RnnTrainConfig c = d.config("m");
  c.epochs = 12;
  std::ostringstream log;
  RnnTrainResult r = train_rnn(c, log);
  EXPECT_GT(r.best_metric, 90.0) << log.str();  // dev BLEU of the reversal task
  auto m = load_rnn_model(c.save_dir);
  EXPECT_EQ(m->config.attention, AttentionKind::Bahdanau);
  EXPECT_EQ(m->src_vocab.size(), 12);  // 4 specials + 8 letters
}

TEST(RnnTrainer, BadInputNamesTheFile) {
  Dataset d;
  RnnTrainConfig c = d.config("x");
  std::ofstream(d.dir / "short.tgt") << "a\nb\n";
  c.train_tgt = (d.dir / "short.tgt").string();
  std::ostringstream log;
  EXPECT_NE(testing::error_of([&] { train_rnn(c, log); }).find("short.tgt has 2"),
            std::string::npos);
  c = d.config("y");
  c.format = CorpusFormat::Cmudict;
  EXPECT_NE(testing::error_of([&] { train_rnn(c, log); }).find("not a CMUdict entry"),
            std::string::npos);
}

}  // namespace
}  // namespace heed
