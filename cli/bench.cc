// `heed bench WORKLOAD`: the workloads of ../shared/bench/pytorch, printing the peer's JSON
// fields, one line per measurement.
// Leaves out: the engine micro-benchmarks (bench/, Google Benchmark: `make bench`).
#include <algorithm>
#include <cstdlib>
#include <iostream>

#include "commands.h"
#include "heed/bench/machine.h"
#include "heed/bench/measure.h"
#include "heed/kernels/quantize.h"

namespace heed::cli {

std::span<const Named<Workload>> names(Workload) {
  static constexpr Named<Workload> kNames[] = {
      {Workload::RnnSeq2Seq, "rnn-seq2seq"},
      {Workload::TransformerSeq2Seq, "transformer-seq2seq"},
      {Workload::Attention, "attention"},
      {Workload::Ctc, "ctc"},
      {Workload::Monotonic, "monotonic"},
      {Workload::Conv, "conv"},
      {Workload::Asr, "asr"},
      {Workload::Features, "features"},
      {Workload::Decode, "decode"}};
  return kNames;
}

namespace {
// the family each seq2seq workload trains and decodes
constexpr std::pair<Workload, const char*> kWorkloadFamilies[] = {
    {Workload::RnnSeq2Seq, RnnSeq2SeqConfig::kFamily},
    {Workload::TransformerSeq2Seq, TransformerSeq2SeqConfig::kFamily}};
}  // namespace

void BenchCommand::add(CLI::App& parent, int& threads) {
  app =
      parent.add_subcommand("bench", "Run a benchmark workload (JSON lines, as the PyTorch peer)");
  add_enum_option(*app, "workload", workload,
                  "rnn-seq2seq (bahdanau_seq2seq.py's workload) | transformer-seq2seq "
                  "(transformer_seq2seq.py's) | attention (attention_bench.py's) | ctc "
                  "(ctc_bench.py's) | monotonic (monotonic_bench.py's) | conv (conv_bench.py's: "
                  "kim_cnn and tcn) | asr (asr_bench.py's features and ctc parts: Kaldi "
                  "filterbanks, a conv-subsampled 3-layer BiLSTM-CTC's training and greedy "
                  "decoding) | features (asr --only features) | decode (a trained model's "
                  "decoding cells: greedy and beam, batch 1 and batched, float32 and int8, on "
                  "--src's sentences) | train: `heed bench train [heed train's flags and --config "
                  "recipes]` is `heed train --bench`, any recipe on its data for --max-minutes. "
                  "Every line names the CPU and the GEMM rates measured at its start")
      ->required();
  app->add_option("--threads", threads, "Threads (0 = all cores)");
  app->add_option(
         "--batch", seq2seq.batch,
         "Sentences per batch (ctc: words, default 128; monotonic: default 64; decode: the "
         "batched cells', default 32)")
      ->capture_default_str();
  app->add_option(
         "--steps", seq2seq.steps,
         "Timed training steps at most (ctc: exactly, default 30; monotonic: exactly, default 5)")
      ->capture_default_str();
  app->add_option("--warmup", seq2seq.warmup, "Untimed training steps first")
      ->capture_default_str();
  app->add_option("--train-budget", seq2seq.train_budget, "Seconds of timed training at most")
      ->capture_default_str();
  app->add_option("--max-len", seq2seq.max_len, "Greedy decoding steps")->capture_default_str();
  app->add_option("--decode-batches", seq2seq.decode_batches, "Timed batch decodes")
      ->capture_default_str();
  app->add_option("--decode-single", seq2seq.decode_single, "Timed batch-1 decodes")
      ->capture_default_str();
  app->add_flag("--skip-train", seq2seq.skip_train, "Skip the training measurement");
  app->add_flag("--skip-decode-batch", seq2seq.skip_dec128,
                "Skip the batched decoding measurement");
  app->add_flag("--skip-decode-single", seq2seq.skip_dec1, "Skip the batch-1 decoding measurement");
  add_enum_option(
      *app, "--compute-type", seq2seq.compute,
      "Decoding weights (int8: per-row symmetric, oneDNN s8s8s32 GEMM); decode: this one "
      "alone (default: float32 and int8)");
  add_enum_option(*app, "--precision", seq2seq.precision,
                  "Training products (bfloat16: mixed precision, as heed train's)");
  app->add_option("--d-model", seq2seq.d_model, "transformer-seq2seq: d_model")
      ->capture_default_str();
  app->add_option("--heads", seq2seq.heads, "transformer-seq2seq: heads")->capture_default_str();
  app->add_option("--ff", seq2seq.ff, "transformer-seq2seq: feed-forward size")
      ->capture_default_str();
  app->add_option("--enc-layers", seq2seq.enc_layers, "transformer-seq2seq: encoder layers")
      ->capture_default_str();
  app->add_option("--dec-layers", seq2seq.dec_layers, "transformer-seq2seq: decoder layers")
      ->capture_default_str();
  app->add_option("--seed", seq2seq.seed, "Random seed")->capture_default_str();
  app->add_option("--shapes", attention.shapes, "attention: comma-separated BxHxTxd shapes")
      ->capture_default_str();
  app->add_option("--budget", attention.budget,
                  "attention: target seconds of timed work per configuration")
      ->capture_default_str();
  app->add_option("--tag", attention.tag, "attention: a label copied into every line");
  app->add_option("--mechanism", mechanism.mechanisms,
                  "attention: instead of the shapes, the training step of the Multi30k RNN "
                  "encoder-decoder with each of these comma-separated --attention mechanisms "
                  "(NAME+syntactic: with syntactic attention over the encoder), e.g. "
                  "luong-general,sigmoid,structured; ratios to the first (default steps 10 per "
                  "round, batch 64)");
  app->add_option("--rounds", mechanism.rounds,
                  "attention --mechanism: rounds alternating the mechanisms; decode: passes over "
                  "--src in every cell (default 3 for both)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  app->add_option("--model", decode.model, "decode: the model directory");
  app->add_option("--src", decode.src, "decode: the source sentences, one a line");
  app->add_option("--sentences", decode.max_sentences,
                  "decode: --src's first N lines only (0: all)")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{0}, int64_t{100000000}));
  app->add_option("--beam", decode.beam, "decode: the beam cells' width (the others are greedy)")
      ->capture_default_str()
      ->check(CLI::Range(2, 256));
  app->add_option("--ctc-shapes", ctc.shapes, "ctc: comma-separated TxBxVxL loss shapes")
      ->capture_default_str();
  app->add_option("--reps", ctc.reps, "ctc: timed repeats of each loss shape")
      ->capture_default_str();
  app->add_option("--upsample", ctc.upsample, "ctc: positions per source letter (the model)")
      ->capture_default_str();
  app->add_flag("--skip-model", ctc.skip_model, "ctc: the loss shapes only");
  app->add_option("--attn", monotonic.attn,
                  "monotonic: the attention, soft (Bahdanau) | monotonic | mocha; heed alone: "
                  "hard-exact | hard-reinforce | hard-gumbel (hard attention, trained so)")
      ->check(CLI::IsMember(
          {"soft", "monotonic", "mocha", "hard-exact", "hard-reinforce", "hard-gumbel"}))
      ->capture_default_str();
  app->add_option("--chunk", monotonic.chunk, "monotonic: mocha's chunk")->capture_default_str();
  app->add_option("--src-lens", monotonic.src_lens,
                  "monotonic: comma-separated source lengths (one line each)")
      ->capture_default_str();
  app->add_option("--only", only,
                  "conv: kim or tcn alone; asr: a comma list of its parts, features, ctc and las "
                  "(default all)");
  app->add_option("--n", asr.n, "asr, features: utterances of white noise per rep")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  app->add_option("--asr-reps", asr.reps, "asr: timed repeats of features and of decoding")
      ->capture_default_str()
      ->check(CLI::Range(1, 10000));
  app->add_option("--utt-s", asr.utt_s, "asr: decoding utterance length, seconds")
      ->capture_default_str()
      ->check(CLI::Range(0.1, 600.0));
  app->add_option("--las-decode-steps", asr.las_decode_steps,
                  "asr, las: exactly this many greedy speller steps (0: up to <eos>, at most 200; "
                  "an untrained model's <eos> is arbitrary), as asr_bench.py's")
      ->capture_default_str()
      ->check(CLI::Range(0, 100000));
  app->add_option("--channels", conv.channels, "conv, tcn: channels C")->capture_default_str();
  app->add_option("--kernel", conv.kernel, "conv, tcn: kernel width k")->capture_default_str();
  app->add_option("--layers", conv.layers, "conv, tcn: blocks L (dilation 2^(l mod 8))")
      ->capture_default_str();
  app->add_option("--len", conv.len, "conv, tcn: tokens per training sequence")
      ->capture_default_str();
  app->add_option("--gen-len", conv.gen_len, "conv, tcn: tokens generated at batch 1")
      ->capture_default_str();
  app->add_option_function<std::string>(
         "--kim-optimizer",
         [this](const std::string& s) {
           conv.kim_optimizer =
               s == "adam" ? OptimizerConfig::Kind::Adam : OptimizerConfig::Kind::Adadelta;
         },
         "conv, kim_cnn: adadelta (the peer's and Kim's, default) | adam")
      ->check(CLI::IsMember({"adadelta", "adam"}));
  app->add_option("--child", attention.child,
                  "attention, internal: run one configuration BxHxTxd/mode/mask in this process");
}

namespace {

// Every line carries the machine (bench/machine.h): measured here, or by the parent process of
// a workload run in children (attention), which hands it down in the environment.
void stamp_lines_with_machine() {
  constexpr const char* kVariable = "HEED_BENCH_MACHINE";
  nlohmann::json fields;
  if (const char* inherited = std::getenv(kVariable))
    fields = nlohmann::json::parse(inherited, nullptr, /*allow_exceptions=*/false);
  if (!fields.is_object()) fields = bench::machine_fields(bench::measure_machine());
  ::setenv(kVariable, fields.dump().c_str(), 1);
  bench::set_line_fields(fields);
}

}  // namespace

namespace {

// The options one workload reads and no other (the shared ones, --seed, --precision,
// --compute-type, --batch and --steps, are read by every workload that has them): given to
// another workload, one is an error, not a silent no-op.
struct OwnOptions {
  const char* who;  // for the message
  std::vector<Workload> workloads;
  std::vector<const char*> options;
};

const std::vector<OwnOptions>& own_options() {
  static const std::vector<OwnOptions> kOwn = {
      {"the seq2seq workloads (rnn-seq2seq, transformer-seq2seq)",
       {Workload::RnnSeq2Seq, Workload::TransformerSeq2Seq},
       {"--warmup", "--train-budget", "--max-len", "--decode-batches", "--decode-single",
        "--skip-train", "--skip-decode-batch", "--skip-decode-single", "--d-model", "--heads",
        "--ff", "--enc-layers", "--dec-layers"}},
      {"attention", {Workload::Attention}, {"--shapes", "--budget", "--tag", "--mechanism"}},
      {"attention and decode", {Workload::Attention, Workload::Decode}, {"--rounds"}},
      {"decode", {Workload::Decode}, {"--model", "--src", "--sentences", "--beam"}},
      {"ctc", {Workload::Ctc}, {"--ctc-shapes", "--reps", "--upsample", "--skip-model"}},
      {"monotonic", {Workload::Monotonic}, {"--attn", "--chunk", "--src-lens"}},
      {"asr and features",
       {Workload::Asr, Workload::Features},
       {"--n", "--asr-reps", "--utt-s", "--las-decode-steps"}},
      {"conv", {Workload::Conv}, {"--channels", "--kernel", "--layers", "--len", "--gen-len"}},
      {"conv, asr and features", {Workload::Conv, Workload::Asr, Workload::Features}, {"--only"}}};
  return kOwn;
}

}  // namespace

int BenchCommand::run() const {
  for (const OwnOptions& own : own_options()) {
    if (std::find(own.workloads.begin(), own.workloads.end(), workload) != own.workloads.end())
      continue;
    for (const char* option : own.options)
      check(app->count(option) == 0, "bench ", name_of(workload), ": ", option, " is for ", own.who,
            "; this workload does not read it");
  }
  // int8 decoding's GEMMs off AMX where they go through oneDNN (a build without heed's int8
  // kernel): before the machine probes run oneDNN's first kernels
  if (seq2seq.compute == ComputeType::Int8 ||
      (workload == Workload::Decode && app->count("--compute-type") == 0))
    kernels::keep_int8_off_amx();
  stamp_lines_with_machine();
  for (const auto& [w, family] : kWorkloadFamilies)
    if (w == workload) {
      Seq2SeqBenchOptions o = seq2seq;
      o.model = family;
      run_seq2seq_bench(o, std::cout);
      return 0;
    }
  if (workload == Workload::Decode) {
    DecodeBenchOptions d = decode;
    d.rounds = mechanism.rounds;
    if (app->count("--batch") > 0) d.batch = seq2seq.batch;
    if (app->count("--compute-type") > 0) d.compute = seq2seq.compute;
    run_decode_bench(d, std::cout);
    return 0;
  }
  if (workload == Workload::Ctc) {
    run_ctc_bench(with_shared_flags(ctc), std::cout);
    return 0;
  }
  if (workload == Workload::Monotonic) {
    run_monotonic_bench(with_shared_flags(monotonic), std::cout);
    return 0;
  }
  if (workload == Workload::Conv) {
    ConvBenchOptions c = conv;
    check(only.empty() || only == "kim" || only == "tcn", "bench conv: --only ", only,
          ": kim or tcn");
    c.only = only;
    run_conv_bench(with_shared_flags(c), std::cout);
    return 0;
  }
  if (workload == Workload::Asr || workload == Workload::Features) {
    AsrBenchOptions a = with_shared_flags(asr);
    if (workload == Workload::Features) {
      check(only.empty() || only == "features", "bench features: --only ", only,
            " (features is asr --only features)");
      a.only = "features";
    } else if (!only.empty()) {
      a.only = only;
    }
    run_asr_bench(a, std::cout);
    return 0;
  }
  if (app->count("--mechanism") > 0) {
    for (const char* option : {"--shapes", "--budget", "--tag"})
      check(app->count(option) == 0, "bench attention: ", option,
            " is for the attention shapes, not --mechanism");
    MechanismBenchOptions m = mechanism;
    m.seed = seq2seq.seed;
    if (app->count("--batch") > 0) m.batch = seq2seq.batch;
    if (app->count("--steps") > 0) m.steps = static_cast<int>(seq2seq.steps);
    run_mechanism_bench(m, std::cout);
    return 0;
  }
  AttentionBenchOptions a = attention;
  a.seed = seq2seq.seed;
  run_attention_bench(a, std::cout);
  return 0;
}

}  // namespace heed::cli
