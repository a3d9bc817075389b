// `heed bench monotonic` (see the header).
#include "heed/bench/monotonic_bench.h"

#include <charconv>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "heed/bench/measure.h"
#include "heed/data/vocab.h"
#include "heed/kernels/parallel.h"
#include "heed/kernels/random.h"
#include "heed/kernels/vmath.h"
#include "heed/models/rnn_seq2seq.h"
#include "heed/train/optimizer.h"
#include "heed/util/error.h"
#include "heed/util/memory.h"

namespace heed {

using bench::Clock;
using bench::round_to;
using bench::since;
using bench::write_line;

namespace {

constexpr int32_t kSrcVocab = 40, kTgtVocab = 70;

std::vector<int32_t> random_ids(Rng& rng, int64_t n, int32_t vocab) {
  std::vector<int32_t> ids;
  for (int64_t k = 0; k < n; ++k)
    ids.push_back(static_cast<int32_t>(Vocab::kSpecials + rng.below(vocab - Vocab::kSpecials)));
  return ids;
}

}  // namespace

void run_monotonic_bench(const MonotonicBenchOptions& o, std::ostream& out) {
  check(o.batch >= 1 && o.steps >= 1 && o.chunk >= 1,
        "bench monotonic: --batch, --steps and --chunk must be >= 1");
  RnnSeq2SeqConfig c;
  c.encoder = RnnEncoderConfig{.cell = CellKind::Gru,
                               .vocab = kSrcVocab,
                               .embed = 64,
                               .hidden = 256,
                               .layers = 1,
                               .bidirectional = false};
  c.tgt_vocab = kTgtVocab;
  c.tgt_embed = 64;
  c.dec_hidden = 256;
  c.dec_cell = CellKind::Gru;
  c.attn_dim = 256;
  c.monotonic_attention.chunk = o.chunk;
  if (o.attn == "soft")
    c.attention = AttentionKind::Bahdanau;
  else if (o.attn == "monotonic")
    c.attention = AttentionKind::Monotonic;
  else if (o.attn == "mocha")
    c.attention = AttentionKind::Mocha;
  else if (o.attn.starts_with("hard-")) {  // hard-exact | hard-reinforce | hard-gumbel
    c.attention = AttentionKind::Hard;
    c.hard.training = parse_name<HardTraining>(o.attn.substr(5), "--attn hard-");
  } else
    fail(
        "bench monotonic: --attn is soft, monotonic, mocha or hard-{exact,reinforce,gumbel}, "
        "got '",
        o.attn, "'");
  ParameterStore params;
  Rng init(o.seed), rng(o.seed);
  const RnnSeq2Seq model(c, Scope(params, init));
  Optimizer opt({}, params);
  // every length checked before any runs: a number >= 2 whose training step fits in memory
  std::vector<int64_t> lengths;
  std::istringstream lens(o.src_lens);
  for (std::string item; std::getline(lens, item, ',');) {
    int64_t S = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), S);
    check(ec == std::errc() && end == item.data() + item.size() && S >= 2,
          "bench monotonic: --src-lens takes lengths >= 2, got '", item, "'");
    // what a training step keeps for its backward, measured with --attn monotonic (peak RSS at
    // S = 100, 200, 400 and batch 64: 0.60, 1.22, 2.68 GB): about 80 KB per sentence and target
    // position (the output layer over the vocabulary) and 64 bytes per sentence and pair of
    // target and source positions (the alignment's recursions); S = 2000 once grew to 24 GB
    const auto B = static_cast<double>(o.batch), Sd = static_cast<double>(S);
    check_memory(B * (8.2e4 * Sd + 64.0 * Sd * Sd) + 64e6,
                 "bench monotonic: a training step of --batch " + std::to_string(o.batch) +
                     " at source length " + std::to_string(S) + " (about)");
    lengths.push_back(S);
  }
  for (const int64_t S : lengths) {
    // batches of S source tokens and S target positions (S - 1 tokens and EOS)
    std::vector<Seq2SeqBatch> data;
    for (int i = 0; i < o.steps + 1; ++i) {
      std::vector<std::vector<int32_t>> src, tgt;
      for (int64_t b = 0; b < o.batch; ++b) {
        src.push_back(random_ids(rng, S, kSrcVocab));
        tgt.push_back(random_ids(rng, S - 1, kTgtVocab));
      }
      data.push_back(make_batch(src, tgt, false));
    }
    Graph g(Mode::Train, o.seed);
    g.set_precision(o.precision);
    Clock::time_point t0;
    for (int i = 0; i < o.steps + 1; ++i) {
      if (i == 1) t0 = Clock::now();
      Var l = model.loss(g, data[i]);
      g.backward(l);
      opt.step(1e-3f, clip_scale(grad_norm(params), 1.0));
      g.clear();
    }
    const double tok_per_s = static_cast<double>(o.batch * S * o.steps) / since(t0);
    // batch-1 greedy decoding of S steps (int8: on copies of the weights quantized now)
    params.prepare_for_inference(o.compute == ComputeType::Int8);
    const std::vector<int32_t> src = random_ids(rng, S, kSrcVocab);
    auto decode = [&](int64_t steps) {
      Graph dg(Mode::Inference);
      const Seq2SeqBatch b = make_batch({src}, {{}}, false);
      auto decoder = model.start_decoding(dg, b, steps, {.wanted = false});
      int32_t prev = Vocab::kBos;
      for (int64_t t = 0; t < steps; ++t) {
        const IncrementalDecoder::Step s = decoder->step({&prev, 1}, Scores::LogitsOnly);
        prev = static_cast<int32_t>(Vocab::kEos +
                                    vmath::argmax(s.scores + Vocab::kEos, kTgtVocab - Vocab::kEos));
      }
    };
    decode(5);
    t0 = Clock::now();
    decode(S);
    const double ms = 1000.0 * since(t0) / static_cast<double>(S);
    write_line(out, nlohmann::json{{"bench", "monotonic"},
                                   {"attn", o.attn},
                                   {"chunk", o.chunk},
                                   {"S", S},
                                   {"batch", o.batch},
                                   {"train_tgt_tok_per_s", round_to(tok_per_s, 1)},
                                   {"precision", name_of(o.precision)},
                                   {"decode_ms_per_token", round_to(ms, 3)},
                                   {"compute", name_of(o.compute)},
                                   {"threads", threads()}});
  }
}

}  // namespace heed
