// The trainer end to end on small files: it learns, writes a loadable model directory, and a
// run stopped part-way and resumed from its checkpoint ends with the same weights as a run
// that never stopped. Bad input files fail with their name.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "heed/decode/beam_search.h"
#include "heed/io/model_dir.h"
#include "heed/io/safetensors.h"
#include "heed/kernels/random.h"
#include "heed/models/model_files.h"
#include "heed/train/trainer.h"
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
  TrainConfig config(const std::string& save) const {
    TrainConfig c;
    c.train_src = (dir / "train.src").string();
    c.train_tgt = (dir / "train.tgt").string();
    c.valid_src = (dir / "valid.src").string();
    c.valid_tgt = (dir / "valid.tgt").string();
    RnnSeq2SeqConfig rnn;
    rnn.encoder = RnnEncoderConfig{.embed = 16, .hidden = 16};
    rnn.tgt_embed = 16;
    rnn.dec_hidden = 32;
    rnn.attn_dim = 16;
    rnn.dropout = 0.1f;
    c.model = rnn;
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

// Two tensors of the same size hold the same bits.
bool same_bits(const Tensor& a, const Tensor& b) {
  return a.numel() == b.numel() && std::memcmp(a.data(), b.data(), a.numel() * 4) == 0;
}

// The latest weights of the runs saved in a/ and b/ are bit for bit the same.
void expect_same_weights(const Dataset& d) {
  Safetensors a = weights(d.config("a").save_dir), b = weights(d.config("b").save_dir);
  ASSERT_EQ(a.tensors.size(), b.tensors.size());
  for (const auto& [name, t] : a.tensors) EXPECT_TRUE(same_bits(t, b.tensors.at(name))) << name;
}

// One field of every validation record of a run's train.jsonl, in order (the step records,
// every --log-every updates, have no dev_ce).
std::vector<double> curve(const std::string& dir, const std::string& key) {
  std::vector<double> values;
  std::ifstream in(fs::path(dir) / "train.jsonl");
  for (std::string line; std::getline(in, line);)
    if (const auto j = nlohmann::json::parse(line); j.contains("dev_ce"))
      values.push_back(j.at(key).get<double>());
  return values;
}

// Trains `c` in two runs: stopped after `stop` steps, then resumed to its end.
void train_in_two_runs(TrainConfig c, int64_t stop, std::ostream& log) {
  c.max_steps = stop;
  train_seq2seq(c, log);
  c.max_steps = 0;
  c.resume = true;
  train_seq2seq(c, log);
}

TEST(RnnTrainer, StoppedAndResumedRunEqualsUninterruptedRun) {
  Dataset d;
  std::ostringstream log;
  TrainResult straight = train_seq2seq(d.config("a"), log);
  EXPECT_EQ(straight.steps, 2 * 38);  // 600 pairs / 16 = 38 batches per epoch

  TrainConfig first = d.config("b");
  first.max_steps = 45;  // stops inside the second epoch
  TrainResult stopped = train_seq2seq(first, log);
  TrainConfig rest = d.config("b");
  rest.resume = true;
  TrainResult resumed = train_seq2seq(rest, log);
  EXPECT_EQ(resumed.steps, straight.steps);
  expect_same_weights(d);
  // training time counts on over the resumption (--max-minutes and the curves use it)
  EXPECT_GT(resumed.minutes, stopped.minutes);
  double last = 0;
  for (const double m : curve(rest.save_dir, "minutes")) {
    EXPECT_GE(m, last);
    last = m;
  }
}

TEST(RnnTrainer, ValidationInsideEpochsChangesNoTrainingStep) {
  // --valid-every validates (and may save the best model) mid-epoch; the weights after training
  // must equal those of a run that validates at epoch ends only, also across a resume.
  Dataset d;
  std::ostringstream log, every_log;
  train_seq2seq(d.config("a"), log);
  TrainConfig every = d.config("b");
  every.valid_every = 10;
  train_in_two_runs(every, 45, every_log);
  // 76 steps: mid-epoch validations at 10, 20, 30 / 40, 50, 60, 70 and the stop at 45
  size_t count = 0;
  for (size_t p = 0; (p = every_log.str().find("validation  epoch", p)) != std::string::npos; ++p)
    ++count;
  EXPECT_EQ(count, 10u) << every_log.str();
  expect_same_weights(d);
}

TEST(RnnTrainer, ABudgetEndingAtAValidationDoesNotValidateTwice) {
  // the first run stops at step 40, which --valid-every 10 has just validated: 10, 20, 30, the
  // epoch's end at 38, 40 once, then the resumed run's 50, 60, 70 and 76
  Dataset d;
  std::ostringstream log;
  TrainConfig every = d.config("a");
  every.valid_every = 10;
  train_in_two_runs(every, 40, log);
  size_t count = 0;
  for (size_t p = 0; (p = log.str().find("validation  epoch", p)) != std::string::npos; ++p)
    ++count;
  EXPECT_EQ(count, 9u) << log.str();
}

TEST(RnnTrainer, CooldownDecaysTheRateToZeroAtTheBudgetsEnd) {
  // --cooldown 0.5 over a 2-epoch budget of 76 steps: the constant rate until step 38, then
  // linearly to 0; train.jsonl records the rate of the next update at every validation.
  Dataset d;
  std::ostringstream log;
  TrainConfig c = d.config("a");
  c.schedule = ScheduleConfig::Kind::Constant;
  c.cooldown = 0.5;
  c.valid_every = 19;
  TrainResult r = train_seq2seq(c, log);
  ASSERT_EQ(r.steps, 76);
  const std::vector<double> rates = curve(c.save_dir, "lr");  // the rate of the next update
  ASSERT_EQ(curve(c.save_dir, "step"), (std::vector<double>{19, 38, 57, 76})) << log.str();
  EXPECT_NEAR(rates[0], 5e-3, 1e-9);  // 19/76 spent: before the cooldown
  // the rate printed is the one of the update after `step`: spent = step / 76 (the epoch's share)
  EXPECT_NEAR(rates[1], 5e-3 * (1 - 38. / 76) / 0.5, 1e-7);
  EXPECT_NEAR(rates[2], 5e-3 * (1 - 57. / 76) / 0.5, 1e-7);
  EXPECT_NEAR(rates[3], 0.0, 1e-9);  // the budget is spent
  // and the updates used it: the weights differ from a run without the cooldown
  TrainConfig plain = d.config("b");
  plain.schedule = ScheduleConfig::Kind::Constant;
  train_seq2seq(plain, log);
  Safetensors a = weights(c.save_dir), b = weights(plain.save_dir);
  bool differ = false;
  for (const auto& [name, t] : a.tensors) differ |= !same_bits(t, b.tensors.at(name));
  EXPECT_TRUE(differ);
}

TEST(RnnTrainer, ExponentialSmoothingIsValidatedAndSavedWithoutChangingTraining) {
  // --exponential-smoothing: training goes on with the weights themselves (the checkpoint's
  // weights equal a run's without smoothing, across a resume too), the checkpoint carries the
  // smoothed copy (a resumed run's equals an uninterrupted one's), and what is validated and
  // saved is that copy: the last kept epoch holds it, and dev cross-entropy differs.
  Dataset d;
  std::ostringstream log;
  train_seq2seq(d.config("a"), log);
  TrainConfig resumed_run = d.config("b");
  resumed_run.smoothing = 0.05f;
  resumed_run.keep_epochs = 1;
  train_in_two_runs(resumed_run, 45, log);
  expect_same_weights(d);
  TrainConfig straight = d.config("c");
  straight.smoothing = 0.05f;
  train_seq2seq(straight, log);
  auto smoothed = [](const std::string& dir) {
    std::map<std::string, Tensor> s;
    for (auto& [name, t] :
         read_safetensors((fs::path(dir) / "checkpoint" / "optimizer.safetensors").string())
             .tensors)
      if (name.starts_with("s/")) s[name.substr(2)] = t;
    return s;
  };
  const auto resumed = smoothed(resumed_run.save_dir), uninterrupted = smoothed(straight.save_dir);
  const Safetensors kept = read_safetensors(
      (fs::path(resumed_run.save_dir) / "epochs" / "epoch_2.safetensors").string());
  const Safetensors raw = weights(resumed_run.save_dir);
  ASSERT_EQ(resumed.size(), raw.tensors.size());
  bool moved = false;
  for (const auto& [name, t] : resumed) {
    EXPECT_TRUE(same_bits(t, uninterrupted.at(name))) << name;
    EXPECT_TRUE(same_bits(t, kept.tensors.at(name))) << name;
    moved |= !same_bits(t, raw.tensors.at(name));
  }
  EXPECT_TRUE(moved);
  const auto plain_ce = curve(d.config("a").save_dir, "dev_ce"),
             smooth_ce = curve(straight.save_dir, "dev_ce");
  ASSERT_EQ(plain_ce.size(), 2u);
  ASSERT_EQ(smooth_ce.size(), 2u);
  EXPECT_NE(plain_ce[1], smooth_ce[1]);
  EXPECT_NE(log.str().find("exponential smoothing 0.05"), std::string::npos);
}

TEST(RnnTrainer, LearnsAndWritesALoadableModel) {
  Dataset d;
  TrainConfig c = d.config("m");
  c.epochs = 12;
  std::ostringstream log;
  TrainResult r = train_seq2seq(c, log);
  EXPECT_GT(r.best_metric, 90.0) << log.str();  // dev BLEU of the reversal task
  auto m = load_model(c.save_dir);
  EXPECT_EQ(m->config.at("attention"), "bahdanau");
  EXPECT_EQ(m->src_vocab.size(), 12);  // 4 specials + 8 letters
}

// A loaded reversal model decodes "a b c d" with beam search to "d c b a", with one attention row
// over the 4 source tokens per output token and EOS.
void expect_reverses_with_attention(const ModelFiles& m) {
  auto hyps = decode_batch(*m.model, {m.src_vocab.encode({"a", "b", "c", "d"})}, {.beam = 3});
  EXPECT_EQ(m.tgt_vocab.decode(hyps[0].tokens), (std::vector<std::string>{"d", "c", "b", "a"}));
  ASSERT_EQ(hyps[0].attention.size(), 5u);  // 4 tokens and EOS, each a row over 4 source tokens
  EXPECT_EQ(hyps[0].attention[0].size(), 4u);
}

// The same trainer with --model transformer: inverse-sqrt warmup, label smoothing, shared
// embeddings (one joint vocabulary); it learns, resumes exactly and loads for decoding.
TrainConfig transformer_config(const Dataset& d, const std::string& save) {
  TrainConfig c = d.config(save);
  TransformerSeq2SeqConfig t;
  t.layer = {.d_model = 32, .heads = 4, .ff = 64, .dropout = 0.1f, .norm = NormPlacement::Pre};
  t.enc_layers = t.dec_layers = 2;
  t.max_positions = 64;
  t.share_embeddings = true;
  c.model = t;
  c.schedule = ScheduleConfig::Kind::InverseSqrt;
  c.warmup = 100;
  c.lr = 3e-3f;
  c.adam_beta2 = 0.98f;
  c.label_smoothing = 0.1f;
  return c;
}

TEST(TransformerTrainer, LearnsAndLoadsForDecoding) {
  Dataset d;
  TrainConfig c = transformer_config(d, "t");
  std::get<TransformerSeq2SeqConfig>(c.model).layer.dropout =
      0;  // 600 pairs: dropout only slows this down
  c.epochs = 24;
  c.patience = 8;  // the dev BLEU of greedy reversal jumps by 20 points between epochs
  std::ostringstream log;
  TrainResult r = train_seq2seq(c, log);
  EXPECT_GT(r.best_metric, 90.0) << log.str();  // dev BLEU of the reversal task
  auto m = load_model(c.save_dir);
  EXPECT_EQ(m->config.at("model"), "transformer");
  EXPECT_EQ(m->src_vocab.size(), m->tgt_vocab.size());  // joint
  expect_reverses_with_attention(*m);
}

// --model conv (ConvS2S) through the trainer: it learns the reversal, and its model directory
// loads and decodes with beam search, one attention row per output over the source.
TEST(ConvTrainer, LearnsAndLoadsForDecoding) {
  Dataset d;
  TrainConfig c = d.config("conv");
  c.model = ConvSeq2SeqConfig{.embed = 32,
                              .channels = 64,
                              .enc_layers = 2,
                              .dec_layers = 2,
                              .dropout = 0,
                              .max_positions = 64};
  c.lr = 2e-3f;
  c.epochs = 24;
  c.patience = 8;
  std::ostringstream log;
  TrainResult r = train_seq2seq(c, log);
  EXPECT_GT(r.best_metric, 90.0) << log.str();  // dev BLEU of the reversal task
  auto m = load_model(c.save_dir);
  EXPECT_EQ(m->config.at("model"), "conv");
  expect_reverses_with_attention(*m);
}

// Mixed precision (--precision bfloat16) learns the task as well, is its own computation (the
// weights differ from the fp32 run's), and resumes exactly.
TEST(TransformerTrainer, LearnsInBfloat16AndResumesExactly) {
  Dataset d;
  std::ostringstream log;
  TrainConfig c = transformer_config(d, "learn");
  std::get<TransformerSeq2SeqConfig>(c.model).layer.dropout = 0;
  // as the fp32 test above: greedy reversal's dev BLEU jumps by 20 points between epochs, so a
  // patience of 4 stopped the sanitizer build's run (other rounding) at 87.56 in epoch 12
  c.epochs = 24;
  c.patience = 8;
  c.precision = Precision::bf16;
  TrainResult r = train_seq2seq(c, log);
  EXPECT_GT(r.best_metric, 90.0) << log.str();
  // 3 epochs in one go (a), and stopped inside the second epoch and resumed (b)
  c.epochs = 3;
  c.save_dir = d.config("a").save_dir;
  train_seq2seq(c, log);
  TrainConfig first = c;
  first.save_dir = d.config("b").save_dir;
  first.max_steps = 50;
  train_seq2seq(first, log);
  TrainConfig rest = c;
  rest.save_dir = first.save_dir;
  rest.resume = true;
  train_seq2seq(rest, log);
  expect_same_weights(d);
  // the same 3 epochs in float32
  TrainConfig fp32 = c;
  fp32.precision = Precision::fp32;
  fp32.save_dir = d.config("f").save_dir;
  train_seq2seq(fp32, log);
  Safetensors a = weights(c.save_dir), f = weights(fp32.save_dir);
  bool differ = false;
  for (const auto& [name, t] : a.tensors) differ = differ || !same_bits(t, f.tensors.at(name));
  EXPECT_TRUE(differ) << "bfloat16 training computed exactly what float32 did";
}

TEST(TransformerTrainer, StoppedAndResumedRunEqualsUninterruptedRun) {
  Dataset d;
  std::ostringstream log;
  train_seq2seq(transformer_config(d, "a"), log);
  TrainConfig first = transformer_config(d, "b");
  first.max_steps = 45;  // inside the second epoch, during the warmup
  train_seq2seq(first, log);
  TrainConfig rest = transformer_config(d, "b");
  rest.resume = true;
  train_seq2seq(rest, log);
  expect_same_weights(d);
}

TEST(RnnTrainer, BadInputNamesTheFile) {
  Dataset d;
  TrainConfig c = d.config("x");
  std::ofstream(d.dir / "short.tgt") << "a\nb\n";
  c.train_tgt = (d.dir / "short.tgt").string();
  std::ostringstream log;
  EXPECT_NE(testing::error_of([&] { train_seq2seq(c, log); }).find("short.tgt has 2"),
            std::string::npos);
  c = d.config("y");
  c.format = CorpusFormat::Cmudict;
  EXPECT_NE(testing::error_of([&] { train_seq2seq(c, log); }).find("are for parallel text"),
            std::string::npos);  // a CMUdict file holds both sides: a target file is refused
  c.train_tgt.clear();
  c.valid_tgt.clear();
  EXPECT_NE(testing::error_of([&] { train_seq2seq(c, log); }).find("not a CMUdict entry"),
            std::string::npos);
}

// --model ctc through the same trainer: a monotonic task (each letter doubled: "a b" ->
// "a a b b", which needs a blank between the two, and one before a next a: --upsample 4), the
// pairs it cannot align
// counted and named in the log, then decoded from the model directory with its picture.
// The doubling task's files in d.dir (ctrain.*, cvalid.*), with `unalignable` a 601st training
// line of 7 labels (and 6 blanks between) for 4 x 1 positions; and the CTC model's config.
TrainConfig doubling_task(Dataset& d, bool unalignable) {
  Rng rng(5);
  for (const std::string name : {"ctrain", "cvalid"}) {
    std::ofstream s(d.dir / (name + ".src")), t(d.dir / (name + ".tgt"));
    for (int i = 0; i < (name == "ctrain" ? 600 : 40); ++i) {
      std::string src, tgt;
      for (int64_t k = 0, len = 2 + rng.below(4); k < len; ++k) {
        const char c = static_cast<char>('a' + rng.below(6));
        src += std::string(k ? " " : "") + c;
        tgt += std::string(k ? " " : "") + c + " " + c;
      }
      s << src << "\n";
      t << tgt << "\n";
    }
    if (name == "ctrain" && unalignable) {
      s << "a\n";
      t << "a a a a a a a\n";
    }
  }
  TrainConfig c = d.config("ctc");
  c.train_src = (d.dir / "ctrain.src").string();
  c.train_tgt = (d.dir / "ctrain.tgt").string();
  c.valid_src = (d.dir / "cvalid.src").string();
  c.valid_tgt = (d.dir / "cvalid.tgt").string();
  CtcConfig ctc;
  ctc.encoder = RnnEncoderConfig{.cell = CellKind::Lstm, .embed = 16, .hidden = 32};
  ctc.upsample = 4;
  c.model = ctc;
  return c;
}

TEST(CtcTrainer, LearnsNamesUnalignablePairsAndDecodes) {
  Dataset d;
  TrainConfig c = doubling_task(d, /*unalignable=*/true);
  c.epochs = 10;
  std::ostringstream log;
  TrainResult r = train_seq2seq(c, log);
  EXPECT_NE(log.str().find("ctrain.src: 1 training pairs cannot be aligned by CTC"),
            std::string::npos)
      << log.str();
  EXPECT_NE(log.str().find("line 601 (a -> a a a a a a a)"), std::string::npos) << log.str();
  EXPECT_GT(r.best_metric, 90.0) << log.str();  // dev BLEU
  auto m = load_model(c.save_dir);
  EXPECT_EQ(m->config.at("model"), "ctc");
  auto hyps = decode_batch(*m->model, {m->src_vocab.encode({"c", "a", "b"})}, {.beam = 3},
                           {.wanted = true});
  EXPECT_EQ(m->tgt_vocab.decode(hyps[0].tokens),
            (std::vector<std::string>{"c", "c", "a", "a", "b", "b"}));
  ASSERT_EQ(hyps[0].attention.size(), 7u);  // 6 labels, then the blank
  // each label's posterior peaks on the letter it copies
  for (size_t k = 0; k < 6; ++k) {
    const auto& row = hyps[0].attention[k];
    EXPECT_EQ(std::max_element(row.begin(), row.end()) - row.begin(), static_cast<long>(k / 2));
  }
  // the most probable alignment: 4 positions per letter, each a label row or the blank's (6),
  // the labels in order, each label in the positions of the letter it copies
  const std::vector<int32_t>& path = hyps[0].path;
  ASSERT_EQ(path.size(), 12u);
  int32_t last = -1;
  for (size_t i = 0; i < path.size(); ++i) {
    if (path[i] == 6) continue;
    EXPECT_GE(path[i], last);
    EXPECT_EQ(path[i] / 2, static_cast<int32_t>(i / 4)) << i;
    last = path[i];
  }
  EXPECT_EQ(last, 5);
}

// Every pair alignable (none left out): the training pairs are all kept as they were (the
// filter once moved them out and kept nothing when it dropped nothing: empty sources at step 1).
TEST(CtcTrainer, KeepsEveryPairWhenAllAlign) {
  Dataset d;
  TrainConfig c = doubling_task(d, /*unalignable=*/false);
  c.max_steps = 3;
  std::ostringstream log;
  const TrainResult r = train_seq2seq(c, log);
  EXPECT_EQ(r.steps, 3) << log.str();
  EXPECT_NE(log.str().find(", 600 training pairs"), std::string::npos) << log.str();
  EXPECT_EQ(log.str().find("cannot be aligned"), std::string::npos) << log.str();
}

}  // namespace
}  // namespace heed
