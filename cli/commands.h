// The subcommands of `heed`: each parses its flags into a typed options struct (add) and then
// runs the library on them (run). main.cc owns the app and the dispatch.
// Leaves out: any model or metric logic (libheed has it).
#pragma once

#include <CLI/CLI.hpp>

#include <cctype>

#include <fstream>
#include <string>
#include <vector>

#include "heed/bench/attention_bench.h"
#include "heed/bench/seq2seq_bench.h"
#include "heed/decode/translator.h"
#include "heed/train/classifier_trainer.h"
#include "heed/train/toy_reverse_demo.h"
#include "heed/train/trainer.h"
#include "heed/util/names.h"
#include "heed/viz/alignment.h"
#include "heed/viz/report.h"

namespace heed::cli {

// An option whose string becomes the enum E at parse time, through E's one name table
// (util/names.h): --help lists the names, a wrong one is refused naming the choices, and
// --dump-config writes the name (not the enum's number).
template <class E>
CLI::Option* add_enum_option(CLI::App& app, const std::string& flag, E& value,
                             const std::string& help) {
  std::vector<std::string> names;
  for (const auto& n : name_table<E>()) names.emplace_back(n.name);
  return app
      .add_option_function<std::string>(
          flag,
          [&value, flag](std::string name) {
            for (char& ch : name)
              ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
            value = parse_name<E>(name, flag);
          },
          help + " {" + choices<E>() + "}")
      ->check(CLI::IsMember(names, CLI::ignore_case))
      ->default_str(name_of(value));
}

struct DemoCommand {
  toy::ReverseDemoOptions options;
  CLI::App* app = nullptr;
  void add(CLI::App& parent, int& threads);
  int run() const;
};

enum class Metric { Bleu, Chrf, Wer, Per, Acc };
std::span<const Named<Metric>> names(Metric);  // "bleu" | "chrf" | "wer" | "per" | "acc"

struct ScoreCommand {
  Metric metric = Metric::Bleu;
  std::vector<std::string> refs;  // one or more reference files, line-parallel to hyp
  std::string hyp;                // the hypothesis file ("-": stdin)
  std::string tokenize = "none";  // BLEU: "none" (text as given) or "13a" (sacreBLEU)
  bool lowercase = false;         // BLEU: case-insensitive
  bool json = false;              // one JSON object instead of the human line
  std::string by_src_length;      // BLEU/chrF per source-length bucket of this source file
  std::vector<int> buckets = {10, 20, 30, 40};  // upper edges (words) of the length buckets
  CLI::App* app = nullptr;
  void add(CLI::App& parent);
  int run() const;
};

struct TrainCommand {
  std::string task = "translate";  // translate (seq2seq, also G2P) | classify
  std::string model = "rnn";       // the architecture: rnn | transformer | self-attentive
  std::string pooling;             // classify: attention | max | mean | last | cls ("": by --model)
  ClassifyTrainConfig classify;    // classify: files and the model's own flags
  std::string format = "auto", src_units = "word", tgt_units = "word", attention = "bahdanau",
              cell = "gru", tsv_columns = "1,2";
  // flags whose default depends on the architecture (unset: < 0 or empty)
  int64_t layers = -1, dec_layers = -1;
  float dropout = -1;
  std::string lr_schedule, norm, activation = "relu", positions = "sinusoidal";
  std::string precision = "float32";  // float32 | bfloat16 (the training graph's products)
  bool untied_output = false;
  // the flags of each encoder-decoder family (the chosen one becomes config.model)
  RnnSeq2SeqConfig rnn;
  TransformerSeq2SeqConfig transformer;
  TrainConfig config;
  CLI::App* app = nullptr;
  void add(CLI::App& parent, int& threads);
  int run();
  int run_classify();
};

// `heed classify`: labels (and probabilities, attention) for sentences on stdin.
struct ClassifyCommand {
  std::string model_dir;
  bool probs = false;         // also print the class probabilities
  std::string attention_out;  // JSONL: tokens, label, the r hops' attention over the tokens
  int64_t batch = 64;
  CLI::App* app = nullptr;
  void add(CLI::App& parent, int& threads);
  int run() const;
};

// Checkpoint averaging: the mean of a run's last kept epochs as a new model directory.
struct AverageCommand {
  std::string model_dir, out_dir;
  int last = 5;  // epochs averaged
  CLI::App* app = nullptr;
  void add(CLI::App& parent);
  int run() const;
};

// Prints one part of the documented by-line-number split of a single TSV file (data/corpus.h),
// one side per line, so that the test sources can be piped into `heed translate` and the
// references scored with `heed score`.
struct SplitCommand {
  std::string file;
  std::string part = "test";        // train | dev | test
  std::string side = "src";         // src | tgt
  std::string tsv_columns = "1,2";  // as heed train's --tsv-columns
  CLI::App* app = nullptr;
  void add(CLI::App& parent);
  int run() const;
};

struct TranslateCommand {
  std::vector<std::string> model_dirs;  // one model, or an ensemble of several
  TranslatorOptions translator;         // compute type
  TranslationOptions options;           // beam, n-best, length penalty, batch, attention, ...
  std::string attention_out;            // JSONL of attention weights, one object per output line
  std::string score_target;             // score these outputs (one per input line) instead
  bool word_scores = false;             // with score_target: every unit's log-probability too
  CLI::App* app = nullptr;
  void add(CLI::App& parent, int& threads);
  int run() const;

 private:
  int score(const Translator& t, const std::vector<std::string>& lines, const TranslationOptions& o,
            std::ofstream& attn) const;
};

// `heed attention`: heatmaps of what a model attends to, for sentences on stdin.
struct AttentionCommand {
  std::vector<std::string> model_dirs;  // one model, or an ensemble of several (seq2seq)
  std::string out;                      // .svg or .png
  viz::AlignOptions align;              // search and Transformer layer/head choice
  viz::HeatmapStyle style;              // cell size, fonts
  int64_t columns = 0;                  // heatmaps per grid row (0: heads per layer)
  int64_t max_sentences = 20;           // drawn (all are decoded and printed)
  CLI::App* app = nullptr;
  void add(CLI::App& parent, int& threads);
  int run() const;
};

// `heed report`: a model's self-contained HTML page.
struct ReportCommand {
  viz::ReportOptions options;
  std::string out;  // the .html file
  CLI::App* app = nullptr;
  void add(CLI::App& parent, int& threads);
  int run() const;
};

struct BenchCommand {
  std::string workload;  // rnn-seq2seq | transformer-seq2seq | attention
  Seq2SeqBenchOptions seq2seq;
  AttentionBenchOptions attention;
  CLI::App* app = nullptr;
  void add(CLI::App& parent, int& threads);
  int run() const;
};

}  // namespace heed::cli
