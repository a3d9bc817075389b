// The speech recognition workloads of the PyTorch peer (see the header).
#include "heed/bench/asr_bench.h"

#include <ctime>
#include <ostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "heed/autograd/ops.h"
#include "heed/bench/measure.h"
#include "heed/data/fbank.h"
#include "heed/data/vocab.h"
#include "heed/decode/ctc_search.h"
#include "heed/kernels/parallel.h"
#include "heed/kernels/random.h"
#include "heed/models/ctc.h"
#include "heed/models/rnn_seq2seq.h"
#include "heed/nn/init.h"
#include "heed/train/optimizer.h"
#include "heed/util/error.h"
#include "heed/util/names.h"

namespace heed {

using bench::Clock;
using bench::round_to;
using bench::since;
using bench::write_line;

namespace {

constexpr int kRate = 16000;
constexpr int64_t kBins = 80, kChars = 30;

int64_t kaldi_frames(int64_t samples) {
  return 1 + (samples - 400) / 160;
}

double cpu_seconds() {
  return static_cast<double>(std::clock()) / CLOCKS_PER_SEC;
}

void features_bench(const AsrBenchOptions& o, std::ostream& out) {
  Rng rng(o.seed);
  std::vector<std::vector<float>> wavs;
  double audio_s = 0;
  for (int i = 0; i < o.n; ++i) {
    const auto n = static_cast<int64_t>(std::llround(rng.uniform(2.f, 8.f) * kRate));
    std::vector<float> w(static_cast<size_t>(n));
    for (float& v : w) v = rng.normal() * 3000.f;
    audio_s += static_cast<double>(n) / kRate;
    wavs.push_back(std::move(w));
  }
  const Fbank fbank;
  auto run = [&] {
    for (const auto& w : wavs) fbank.compute(w);
  };
  run();  // warm-up
  std::vector<double> wall, cpu;
  for (int r = 0; r < o.reps; ++r) {
    const double c0 = cpu_seconds();
    const auto t0 = Clock::now();
    run();
    wall.push_back(since(t0));
    cpu.push_back(cpu_seconds() - c0);
  }
  const double w = bench::median(wall), c = bench::median(cpu);
  write_line(out, nlohmann::json{{"bench", "asr_fbank"},
                                 {"n", o.n},
                                 {"audio_s", round_to(audio_s, 2)},
                                 {"reps", o.reps},
                                 {"median_ms", round_to(1000 * w, 2)},
                                 {"xrt", round_to(audio_s / w, 1)},
                                 {"xrt_cpu", round_to(audio_s / c, 1)},
                                 {"threads", threads()}});
}

struct Batch {
  Seq2SeqBatch b;
  double seconds = 0;
  int64_t frames = 0, labels = 0;
};

// B utterances of uniform(lo, hi) s: N(0, 1) features at 100 frames/s, round(13 s) labels
Batch make_batch(Rng& rng, int64_t B, double lo, double hi) {
  std::vector<std::vector<float>> feats;
  std::vector<std::vector<int32_t>> tgt;
  Batch out;
  for (int64_t i = 0; i < B; ++i) {
    const auto samples = static_cast<int64_t>(
        std::llround(rng.uniform(static_cast<float>(lo), static_cast<float>(hi)) * kRate));
    const int64_t n = kaldi_frames(samples);
    std::vector<float> f(static_cast<size_t>(n * kBins));
    for (float& v : f) v = rng.normal();
    std::vector<int32_t> t(static_cast<size_t>(
        std::max<int64_t>(1, std::llround(13.0 * static_cast<double>(samples) / kRate))));
    for (int32_t& y : t) y = static_cast<int32_t>(Vocab::kSpecials + rng.below(kChars));
    out.seconds += static_cast<double>(samples) / kRate;
    out.frames += n;
    out.labels += static_cast<int64_t>(t.size());
    feats.push_back(std::move(f));
    tgt.push_back(std::move(t));
  }
  out.b =
      make_audio_batch({feats.begin(), feats.end()}, kBins, tgt, AudioFrontEndConfig::kMinFrames);
  return out;
}

// `steps` training steps (forward, loss, backward, clip 5, Adam 1e-3) after 2 warm-ups, each on a
// fresh batch of asr_bench.py's: what they read and how long they took.
struct Trained {
  double seconds = 0, train_s = 0, median_step_ms = 0;
  int64_t frames = 0, labels = 0, tokens = 0;  // tokens: labels and each utterance's <eos>
};

Trained train_steps(const Seq2SeqModel& model, ParameterStore& params, Rng& rng,
                    const AsrBenchOptions& o) {
  std::vector<Batch> data;
  data.reserve(static_cast<size_t>(o.steps + 2));
  for (int i = 0; i < o.steps + 2; ++i) data.push_back(make_batch(rng, o.batch, 2.0, 8.0));
  Optimizer opt({}, params);
  Graph g(Mode::Train, o.seed);
  g.set_precision(o.precision);
  Trained t;
  std::vector<double> ms;
  Clock::time_point t0;
  for (int i = 0; i < o.steps + 2; ++i) {
    const auto start = Clock::now();
    if (i == 2) t0 = start;
    const Batch& d = data[static_cast<size_t>(i)];
    Var l = model.loss(g, d.b);
    g.backward(l);
    opt.step(1e-3f, clip_scale(grad_norm(params), 5.0));
    g.clear();
    if (i >= 2) {
      ms.push_back(1000 * since(start));
      t.seconds += d.seconds;
      t.frames += d.frames;
      t.labels += d.labels;
      t.tokens += d.labels + d.b.B;
    }
  }
  t.train_s = since(t0);
  t.median_step_ms = bench::median(ms);
  return t;
}

// The peer's listener: a 3-layer BiLSTM of 320 per direction over the conv x4 front end's d
RnnEncoderConfig listener(const AsrBenchOptions& o) {
  return {.cell = CellKind::Lstm,
          .vocab = 0,
          .embed = o.d,
          .hidden = 320,
          .layers = 3,
          .bidirectional = true};
}
AudioFrontEndConfig front_end(const AsrBenchOptions& o) {
  return {.features = kBins, .channels = 32, .dim = o.d, .mean = {}, .stddev = {}};
}

void ctc_bench(const AsrBenchOptions& o, std::ostream& out) {
  Rng rng(o.seed);
  CtcConfig c;
  c.encoder = listener(o);
  c.tgt_vocab = Vocab::kSpecials + kChars;
  c.set_audio(front_end(o));
  ParameterStore params;
  Rng init(o.seed);
  const CtcModel model(c, Scope(params, init));
  const Trained t = train_steps(model, params, rng, o);
  write_line(out, nlohmann::json{
                      {"bench", "asr_ctc_train"},
                      {"batch", o.batch},
                      {"steps", o.steps},
                      {"params", params.numel()},
                      {"precision", name_of(o.precision)},
                      {"audio_s_per_s", round_to(t.seconds / t.train_s, 2)},
                      {"frames_per_s", round_to(static_cast<double>(t.frames) / t.train_s, 1)},
                      {"tgt_labels_per_s", round_to(static_cast<double>(t.labels) / t.train_s, 1)},
                      {"median_step_ms", round_to(t.median_step_ms, 1)},
                      {"threads", threads()}});
  params.prepare_for_inference(o.compute == ComputeType::Int8);
  for (int64_t B : {int64_t{1}, o.batch}) {
    const Batch d = make_batch(rng, B, o.utt_s, o.utt_s);
    auto decode = [&] { ctc_decode_batch(model, d.b, {.beam = 1}, false); };
    decode();
    decode();
    const double w = bench::median(bench::timed(o.reps, 1e300, [&](int) { decode(); }));
    write_line(out, nlohmann::json{{"bench", "asr_ctc_greedy"},
                                   {"batch", B},
                                   {"utt_s", o.utt_s},
                                   {"reps", o.reps},
                                   {"median_ms", round_to(1000 * w, 2)},
                                   {"rtf", round_to(w / d.seconds, 5)},
                                   {"compute", name_of(o.compute)},
                                   {"threads", threads()}});
  }
}

// Listen, Attend and Spell as the peer's: the ctc part's listener, an LSTM speller of 512 over
// embeddings of 128, location-aware attention (10 filters of width 31, attention dim 320).
// heed's concat read-out also reads E y_{i-1} (the peer's reads [s_i; c_i]).
void las_bench(const AsrBenchOptions& o, std::ostream& out) {
  Rng rng(o.seed);
  RnnSeq2SeqConfig c;
  c.encoder = listener(o);
  c.tgt_vocab = Vocab::kSpecials + kChars;
  c.tgt_embed = 128;
  c.dec_hidden = 512;
  c.dec_cell = CellKind::Lstm;
  c.attention = AttentionKind::Location;
  c.attn_dim = 320;
  c.location.filters = 10;
  c.location.width = 31;
  c.set_audio(front_end(o));
  ParameterStore params;
  Rng init(o.seed);
  const RnnSeq2Seq model(c, Scope(params, init));
  const Trained t = train_steps(model, params, rng, o);
  write_line(out, nlohmann::json{
                      {"bench", "asr_las_train"},
                      {"loc_filters", 10},
                      {"loc_width", 31},
                      {"batch", o.batch},
                      {"steps", o.steps},
                      {"params", params.numel()},
                      {"precision", name_of(o.precision)},
                      {"audio_s_per_s", round_to(t.seconds / t.train_s, 2)},
                      {"tgt_tokens_per_s", round_to(static_cast<double>(t.tokens) / t.train_s, 1)},
                      {"median_step_ms", round_to(t.median_step_ms, 1)},
                      {"threads", threads()}});
  // greedy decoding at batch 1: the listener once, then exactly las_decode_steps speller steps
  // (an untrained model's <eos> is arbitrary), or up to <eos> and 200 steps
  params.prepare_for_inference(o.compute == ComputeType::Int8);
  const Batch d = make_batch(rng, 1, o.utt_s, o.utt_s);
  const bool fixed = o.las_decode_steps > 0;
  const int max_out = fixed ? o.las_decode_steps : 200;
  Graph g(Mode::Inference);
  int steps = 0;
  std::vector<double> encoder_s;  // each run's listener
  auto decode = [&] {
    g.clear();
    const auto t0 = Clock::now();
    auto dec = model.start_decoding(g, d.b, max_out, {});
    encoder_s.push_back(since(t0));
    std::vector<int32_t> y = {Vocab::kBos};
    for (steps = 0; steps < max_out;) {
      const IncrementalDecoder::Step s = dec->step(y, Scores::LogitsOnly);
      ++steps;
      const float* row = s.scores;
      y[0] = static_cast<int32_t>(std::max_element(row, row + c.tgt_vocab) - row);
      if (!fixed && y[0] == Vocab::kEos) break;
    }
  };
  decode();
  decode();
  encoder_s.clear();
  const std::vector<double> wall = bench::timed(o.reps, 1e300, [&](int) { decode(); });
  std::vector<double> speller_ms;
  for (size_t r = 0; r < wall.size(); ++r)
    speller_ms.push_back(1000 * (wall[r] - encoder_s[r]) / steps);
  const double w = bench::median(wall);
  write_line(out, nlohmann::json{{"bench", "asr_las_greedy"},
                                 {"loc_filters", 10},
                                 {"loc_width", 31},
                                 {"batch", 1},
                                 {"utt_s", o.utt_s},
                                 {"out_steps", steps},
                                 {"max_out", max_out},
                                 {"reps", o.reps},
                                 {"median_ms", round_to(1000 * w, 2)},
                                 {"rtf", round_to(w / d.seconds, 5)},
                                 {"speller_ms_per_step", round_to(bench::median(speller_ms), 3)},
                                 {"compute", name_of(o.compute)},
                                 {"threads", threads()}});
}

}  // namespace

void run_asr_bench(const AsrBenchOptions& o, std::ostream& out) {
  check(o.n >= 1 && o.reps >= 1 && o.steps >= 1 && o.batch >= 1 && o.d >= 1 && o.utt_s >= 0.1,
        "bench asr: --n, --reps, --steps, --batch, --d must be >= 1 and --utt-s >= 0.1");
  std::istringstream parts(o.only);
  bool any = false;
  for (std::string p; std::getline(parts, p, ',');) {
    if (p == "features") {
      features_bench(o, out);
    } else if (p == "ctc") {
      ctc_bench(o, out);
    } else if (p == "las") {
      las_bench(o, out);
    } else {
      fail("bench asr: --only: unknown part '", p, "' (parts: features, ctc, las)");
    }
    any = true;
  }
  check(any, "bench asr: --only names no part (features, ctc, las)");
}

}  // namespace heed
