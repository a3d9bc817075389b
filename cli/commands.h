// The subcommands of `heed`: each parses its flags into a typed options struct (add) and then
// runs the library on them (run). main.cc owns the app and the dispatch.
// Leaves out: any model or metric logic (libheed has it).
#pragma once

#include <CLI/CLI.hpp>

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <optional>

#include <string>
#include <vector>

#include "heed/bench/asr_bench.h"
#include "heed/bench/attention_bench.h"
#include "heed/bench/conv_bench.h"
#include "heed/bench/ctc_bench.h"
#include "heed/bench/decode_bench.h"
#include "heed/bench/mechanism_bench.h"
#include "heed/bench/monotonic_bench.h"
#include "heed/bench/seq2seq_bench.h"
#include "heed/data/fbank.h"
#include "heed/data/speech_corpus.h"
#include "heed/decode/recognizer.h"
#include "heed/decode/translator.h"
#include "heed/io/audio_stream.h"
#include "heed/io/files.h"
#include "heed/metrics/metrics.h"
#include "heed/serve/server.h"
#include "heed/train/classifier_trainer.h"
#include "heed/train/toy_reverse_demo.h"
#include "heed/train/train_options.h"
#include "heed/train/trainer.h"
#include "heed/util/error.h"
#include "heed/util/names.h"
#include "heed/viz/alignment.h"
#include "heed/viz/report.h"

namespace heed::cli {

// Ranges of numeric flags, checked at parse time (a NaN is in no range)
inline const CLI::Validator kFinite(
    [](std::string& s) {
      return std::isfinite(std::strtod(s.c_str(), nullptr)) ? std::string()
                                                            : "must be a finite number";
    },
    "FINITE");
inline const CLI::Validator kSize = CLI::Range(int64_t{1}, int64_t{1} << 24);  // a layer's width
inline const CLI::Validator kNonNegative = CLI::NonNegativeNumber & kFinite;
inline const CLI::Validator kPositive = CLI::PositiveNumber & kFinite;
inline const CLI::Validator kProbability = CLI::Range(0.0, 0.999999) & kFinite;  // in [0, 1)
inline const CLI::Validator kFraction = CLI::Range(1e-9, 1.0) & kFinite;         // in (0, 1]

// Everything written to stdout so far reached it: flushed, or an Error "<stdout>: write failed
// (reason)" (a full disk, a closed pipe). main() calls it after every command; long outputs
// call it as they go, so that they stop at the first failed write.
void check_stdout();

// `--compute-type int8` on a CPU without VNNI: a warning on stderr, naming `command`, that the
// int8 products run as fp32 GEMMs there (the same outputs, no faster than float32).
void warn_if_int8_inexact(const char* command, ComputeType compute);

// A bad command line or --config file: what follows "heed: error: " (main() prints it and exits
// with 2; the Python package raises ValueError), and whether to point at --help after it.
struct UsageError : Error {
  UsageError(const std::string& what, bool help_hint) : Error(what), help_hint(help_hint) {}
  bool help_hint;
};

// The whole command line (app.cc): parses argv, runs the subcommand, returns the exit code;
// a bad command line or --config file is a UsageError, errors while running other Errors.
int run(int argc, char** argv);

// Names are taken in any case and kept in lower case (what --dump-config then writes).
inline std::string lowercase(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

// An option whose string becomes the enum E at parse time, through E's one name table
// (util/names.h): --help lists the names, a wrong one is refused naming the choices, and
// --dump-config writes the name (not the enum's number). `set` receives the value.
template <class E, class Set>
CLI::Option* add_named_option(CLI::App& app, const std::string& flag, Set set,
                              const std::string& help) {
  std::vector<std::string> names;
  for (const auto& n : name_table<E>()) names.emplace_back(n.name);
  return app
      .add_option_function<std::string>(
          flag, [set, flag](const std::string& name) { set(parse_name<E>(name, flag)); }, help)
      ->transform(lowercase, "")
      ->check(CLI::IsMember(names));
}
template <class E>
CLI::Option* add_enum_option(CLI::App& app, const std::string& flag, E& value,
                             const std::string& help) {
  return add_named_option<E>(
             app, flag, [&value](E e) { value = e; }, help)
      ->default_str(name_of(value));
}
// The same for an option whose default depends on other flags: unset until given.
template <class E>
CLI::Option* add_enum_option(CLI::App& app, const std::string& flag, std::optional<E>& value,
                             const std::string& help) {
  return add_named_option<E>(
      app, flag, [&value](E e) { value = e; }, help);
}

struct DemoCommand {
  toy::ReverseDemoOptions options;
  CLI::App* app = nullptr;
  void add(CLI::App& parent, int& threads);
  int run() const;
};

enum class Metric { Bleu, Chrf, Wer, Cer, Per, Acc, Latency };
std::span<const Named<Metric>> names(Metric);  // "bleu" | "chrf" | "wer" | "cer" | "per" | ...

struct ScoreCommand {
  Metric metric = Metric::Bleu;
  std::vector<std::string> refs;               // one or more reference files, line-parallel to hyp
  std::string hyp;                             // the hypothesis file ("-": stdin)
  BleuTokenize tokenize = BleuTokenize::V13a;  // sacreBLEU's default
  bool multi_bleu = false;     // BLEU on tokenised text as given, as multi-bleu.perl
  bool lowercase = false;      // BLEU and chrF: case-insensitive
  ChrfOptions chrf;            // chrF: orders, beta, whitespace, smoothing
  int width = 2;               // decimals of BLEU and chrF
  bool normalise = false;      // WER/CER of transcripts: data/transcript.h on both sides
  bool json = false;           // one JSON object instead of the human line
  std::string by_src_length;   // BLEU/chrF per source-length bucket of this source file
  bool by_ref_length = false;  // WER/CER per reference-length bucket
  std::vector<int> buckets = {10, 20, 30, 40};  // upper edges (words) of the length buckets
  CLI::App* app = nullptr;
  void add(CLI::App& parent);
  int run() const;
};

// `heed train`: the options of train/train_options.h as flags, then train().
struct TrainCommand {
  TrainOptions options;
  CLI::App* app = nullptr;
  void add(CLI::App& parent, int& threads);
  int run();
};

// `heed classify`: labels (and probabilities, attention) for sentences on stdin.
struct ClassifyCommand {
  std::vector<std::string> model_dirs;  // one model, or an ensemble of several
  bool probs = false;                   // also print the class probabilities
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

// `heed export`: a trained model in another toolkit's format (models/ctranslate2_export.h).
enum class ExportFormat { CTranslate2 };
std::span<const Named<ExportFormat>> names(ExportFormat);  // "ctranslate2"
struct ExportCommand {
  ExportFormat format = ExportFormat::CTranslate2;
  std::string model_dir, out_dir;
  CLI::App* app = nullptr;
  void add(CLI::App& parent);
  int run() const;
};

// `heed import`: another toolkit's checkpoint as a heed model (models/checkpoint_import.h).
enum class ImportFormat { OpennmtPy, Marian };
std::span<const Named<ImportFormat>> names(ImportFormat);  // "opennmt-py" | "marian"
struct ImportCommand {
  ImportFormat format = ImportFormat::OpennmtPy;
  std::string checkpoint, out_dir;
  std::vector<std::string> vocabs;  // Marian's .yml vocabularies
  CLI::App* app = nullptr;
  void add(CLI::App& parent);
  int run() const;
};

// One side of a pair of files or columns.
enum class Side { Src, Tgt };
std::span<const Named<Side>> names(Side);  // "src" | "tgt"

// Prints one part of the documented by-line-number split of a single TSV file (data/corpus.h),
// one side per line, so that the test sources can be piped into `heed translate` and the
// references scored with `heed score`.
struct SplitCommand {
  std::string file;
  Split part = Split::Test;
  Side side = Side::Src;
  std::string tsv_columns = "1,2";  // as heed train's --tsv-columns
  CLI::App* app = nullptr;
  void add(CLI::App& parent);
  int run() const;
};

// `heed lm`: a modified Kneser–Ney n-gram model of output units, as an ARPA file (for the
// prefix search of ctc models: heed translate --lm).
// `heed features`: audio files to Kaldi's log-mel filterbanks (.npy).
struct FeaturesCommand {
  std::vector<std::string> inputs;
  std::string data;  // or a Kaldi data directory / manifest
  std::string out;
  int bins = 80;
  FbankPrecision precision = FbankPrecision::float32;
  double max_seconds = 3600;
  CLI::App* app = nullptr;
  void add(CLI::App& parent);
  int run() const;
};

struct TranscribeCommand {
  std::string model;
  std::vector<std::string> inputs;  // audio, manifests, Kaldi directories (none: stdin)
  RecognizeOptions options;
  std::string lm;             // an ARPA file
  DecodeOverrides overrides;  // --ctc-weight
  ComputeType compute_type = ComputeType::Float32;
  double max_seconds = 3600;
  // --online: streaming recognition (decode/recognizer_stream.h; cli/transcribe_online.cc)
  bool online = false;
  StreamFormat input_format = StreamFormat::Wav;  // stdin's
  int sample_rate = 16000, channels = 1;          // raw stdin's
  double chunk_ms = 160;                          // audio read per step
  bool realtime = false;                          // files at the pace of their audio
  bool partial = false;                           // partial results too
  double endpoint_ms = 0;                         // a blank run this long ends a segment
  CLI::App* app = nullptr;
  void add(CLI::App& parent, int& threads);
  int run() const;
  int run_online(Recognizer& recognizer, const std::vector<Utterance>& utterances) const;
};

struct LmCommand {
  std::string train;  // CMUdict (its pronunciations) or text (every line)
  CorpusFormat format = CorpusFormat::Auto;
  Units units = Units::Word;
  int order = 5;
  std::string out;
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
  bool online = false;                  // simultaneous decoding, the model's READ/WRITE policy
  bool flush = false;                   // each line answered as soon as it is read
  std::string latency_out;              // with online: the delays, JSON lines
  CLI::App* app = nullptr;
  void add(CLI::App& parent, int& threads);
  int run() const;

 private:
  int run_online(const Translator& t, const TranslationOptions& o) const;
  int run_interactive(const Translator& t, const TranslationOptions& o) const;
  int score(const Translator& t, const std::vector<std::string>& lines, const TranslationOptions& o,
            AtomicFile* attn) const;
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
  std::string out;                   // the .html file
  std::vector<std::string> samples;  // --samples: a count, a viz::SampleChoice, or both
  CLI::App* app = nullptr;
  void add(CLI::App& parent, int& threads);
  int run() const;
};

// `heed serve`: models behind HTTP until SIGTERM (serve/server.h).
struct ServeCommand {
  std::vector<std::string> models;  // NAME=DIR (or DIR)
  serve::ServeOptions options;      // address, batching and limits
  int max_wait_ms = 0;              // options.batching.max_wait
  CLI::App* app = nullptr;
  void add(CLI::App& parent, int& threads);
  int run();
};

// `heed bench`'s workloads, those of ../shared/bench/pytorch.
enum class Workload {
  RnnSeq2Seq,
  TransformerSeq2Seq,
  Attention,
  Ctc,
  Monotonic,
  Conv,
  Asr,
  Features,
  Decode
};
std::span<const Named<Workload>> names(Workload);

struct BenchCommand {
  Workload workload = Workload::RnnSeq2Seq;
  Seq2SeqBenchOptions seq2seq;
  AttentionBenchOptions attention;
  MechanismBenchOptions mechanism;  // attention --mechanism: a model's mechanisms instead
  CtcBenchOptions ctc;
  MonotonicBenchOptions monotonic;
  ConvBenchOptions conv;
  AsrBenchOptions asr;
  DecodeBenchOptions decode;  // a trained model's decoding cells (issue 70)
  std::string only;           // conv: kim | tcn; asr: its parts
  CLI::App* app = nullptr;
  void add(CLI::App& parent, int& threads);
  int run() const;
  // A peer workload's options with the flags they share, parsed into `seq2seq`: seed, precision,
  // compute type, and --batch / --steps when given (each workload has its own defaults).
  template <class Options>
  Options with_shared_flags(Options o) const {
    o.seed = seq2seq.seed;
    o.precision = seq2seq.precision;
    o.compute = seq2seq.compute;
    if (app->count("--batch") > 0) o.batch = seq2seq.batch;
    if (app->count("--steps") > 0) o.steps = static_cast<int>(seq2seq.steps);
    return o;
  }
};

}  // namespace heed::cli
