// The RNN seq2seq benchmark (workload and fields in the header).
// Leaves out: the peer's numpy/torch random streams (the data are drawn from the same
// distributions with heed's RNG, so lengths and tokens differ sentence by sentence, not in law).
#include "heed/bench/rnn_seq2seq_bench.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ostream>
#include <random>
#include <vector>

#include <nlohmann/json.hpp>

#include "heed/autograd/ops.h"
#include "heed/bench/measure.h"
#include "heed/data/vocab.h"
#include "heed/kernels/parallel.h"
#include "heed/models/rnn_seq2seq.h"
#include "heed/train/optimizer.h"
#include "heed/util/error.h"
#include "heed/version.h"

namespace heed {
namespace {

using bench::Clock;
using bench::maxrss_mb;
using bench::median;
using bench::round_to;
using bench::since;
using bench::sum;
using bench::timed;

// One synthetic sequence: SOS, uniform tokens in [4, vocab), EOS; length as the peer draws it.
struct Synthetic {
  std::mt19937_64 gen;
  std::gamma_distribution<double> gamma{2.0, 2.5};
  explicit Synthetic(uint64_t seed) : gen(seed) {}
  std::vector<int32_t> sequence(int64_t vocab) {
    auto len = static_cast<int64_t>(std::clamp(8.0 + std::nearbyint(gamma(gen)), 8.0, 30.0));
    std::uniform_int_distribution<int32_t> tok(4, static_cast<int32_t>(vocab - 1));
    std::vector<int32_t> s(len);
    s[0] = 1;  // SOS
    for (int64_t i = 1; i + 1 < len; ++i) s[i] = tok(gen);
    s[len - 1] = 2;  // EOS
    return s;
  }
};

}  // namespace

void run_rnn_seq2seq_bench(const RnnBenchOptions& o, std::ostream& out) {
  RnnSeq2SeqConfig c;
  c.encoder = {.cell = CellKind::Gru,
               .vocab = o.src_vocab,
               .embed = o.emb,
               .hidden = o.enc_hid,
               .layers = 1,
               .bidirectional = true,
               .dropout = o.dropout};
  c.tgt_vocab = o.tgt_vocab;
  c.tgt_embed = o.emb;
  c.dec_hidden = o.dec_hid;
  c.attention = AttentionKind::Bahdanau;
  c.attn_dim = o.dec_hid;
  c.dropout = o.dropout;
  ParameterStore params;
  Rng rng(o.seed);
  RnnSeq2Seq model(c, Scope(params, rng));
  nlohmann::json base = {{"bench", "bahdanau_seq2seq"},
                         {"config", "default"},
                         {"attn", "split"},
                         {"threads", threads()},
                         {"heed", HEED_VERSION},
                         {"tag", ""},
                         {"emb", o.emb},
                         {"enc_hid", o.enc_hid},
                         {"dec_hid", o.dec_hid}};
  auto line = [&](const nlohmann::json& extra) {
    nlohmann::json j = base;
    j.update(extra);
    out << j.dump() << "\n" << std::flush;
  };
  line({{"what", "params"},
        {"params", params.numel()},
        {"src_vocab", o.src_vocab},
        {"tgt_vocab", o.tgt_vocab}});
  // data: src whole (SOS .. EOS); the target's inner tokens, make_batch adds BOS/EOS back
  Synthetic syn(o.seed);
  std::vector<Seq2SeqBatch> data;
  for (int i = 0; i < o.warmup + o.steps; ++i) {
    std::vector<std::vector<int32_t>> src, tgt;
    for (int64_t b = 0; b < o.batch; ++b) {
      src.push_back(syn.sequence(o.src_vocab));
      auto t = syn.sequence(o.tgt_vocab);
      tgt.emplace_back(t.begin() + 1, t.end() - 1);
    }
    data.push_back(make_batch(src, tgt, false));
  }
  if (!o.skip_train) {
    Optimizer opt({.kind = OptimizerConfig::Kind::Adam}, params);
    Graph g(Mode::Train, o.seed);
    double loss = 0;
    auto step = [&](const Seq2SeqBatch& b) {
      Var l = model.loss(g, b);
      loss = l.value().data()[0];
      g.backward(l);
      clip_grad_norm(params, 1.0);
      opt.step(1e-3f);
      g.clear();
    };
    for (int i = 0; i < o.warmup; ++i) step(data[i]);
    std::vector<double> times;
    int64_t tokens = 0, padded = 0, src_tokens = 0;
    auto t_start = Clock::now();
    for (int i = o.warmup; i < o.warmup + o.steps; ++i) {
      auto t0 = Clock::now();
      step(data[i]);
      times.push_back(since(t0));
      tokens += data[i].target_tokens;
      padded += data[i].T * data[i].B;
      for (int32_t l : data[i].src_lengths) src_tokens += l;
      if (static_cast<int>(times.size()) >= o.min_steps && since(t_start) > o.train_budget) break;
    }
    double total = 0;
    for (double t : times) total += t;
    auto n = static_cast<double>(times.size());
    line({{"what", "train"},
          {"batch", o.batch},
          {"steps", times.size()},
          {"warmup", o.warmup},
          {"tgt_tokens_per_s", round_to(static_cast<double>(tokens) / total, 1)},
          {"padded_positions_per_s", round_to(static_cast<double>(padded) / total, 1)},
          {"src_tokens_per_s", round_to(static_cast<double>(src_tokens) / total, 1)},
          {"sentences_per_s", round_to(static_cast<double>(o.batch) * n / total, 2)},
          {"median_step_ms", round_to(median(times) * 1e3, 1)},
          {"min_step_ms", round_to(*std::min_element(times.begin(), times.end()) * 1e3, 1)},
          {"max_step_ms", round_to(*std::max_element(times.begin(), times.end()) * 1e3, 1)},
          {"mean_tgt_len",
           round_to(static_cast<double>(tokens) / (static_cast<double>(o.batch) * n) + 1, 2)},
          {"last_loss", round_to(loss, 4)},
          {"maxrss_mb", maxrss_mb()}});
  }
  check(o.compute == "float32" || o.compute == "int8", "--compute-type ", o.compute,
        " (expected float32 or int8)");
  if (o.compute == "int8") params.quantize_for_inference();
  // greedy decoding of exactly max_len steps (no early stop, as the peer)
  auto greedy = [&](std::span<const int32_t> src, int64_t S, std::span<const int32_t> lengths) {
    Graph g(Mode::Inference);
    auto st = model.start(g, src, S, lengths, model.attention());
    const Graph::Mark encoded = g.mark();
    std::vector<int32_t> tok(lengths.size(), Vocab::kBos);
    const int64_t V = c.tgt_vocab;
    for (int64_t t = 0; t < o.max_len; ++t) {
      // the peer's greedy search: argmax of the logits (no softmax)
      auto s = model.step(g, tok, st, model.attention(), RnnSeq2Seq::Scores::LogitsOnly);
      const float* lp = s.logits.value().data();
      for (size_t b = 0; b < tok.size(); ++b)
        tok[b] =
            static_cast<int32_t>(std::max_element(lp + b * V, lp + (b + 1) * V) - (lp + b * V));
      st = s.next;
      RnnSeq2Seq::recycle(g, encoded, st);
    }
  };
  if (!o.skip_dec128) {
    greedy(data[0].src, data[0].S, data[0].src_lengths);  // warm-up
    auto times = timed(o.decode_batches, o.decode_budget, [&](int i) {
      const auto& b = data[i % data.size()];
      greedy(b.src, b.S, b.src_lengths);
    });
    double total = sum(times);
    auto n = static_cast<double>(times.size());
    line({{"what", "greedy_decode"},
          {"compute", o.compute},
          {"batch", o.batch},
          {"max_len", o.max_len},
          {"batches", times.size()},
          {"sentences_per_s", round_to(static_cast<double>(o.batch) * n / total, 2)},
          {"tokens_per_s", round_to(static_cast<double>(o.batch * o.max_len) * n / total, 1)},
          {"median_batch_ms", round_to(median(times) * 1e3, 1)},
          {"maxrss_mb", maxrss_mb()}});
  }
  if (!o.skip_dec1) {
    std::vector<std::vector<int32_t>> singles;  // the first two sentences of every batch
    for (const auto& b : data)
      for (int64_t k = 0; k < 2; ++k) {
        std::vector<int32_t> s;
        for (int64_t t = 0; t < b.src_lengths[k]; ++t) s.push_back(b.src[t * b.B + k]);
        singles.push_back(s);
      }
    auto one = [&](const std::vector<int32_t>& s) {
      std::vector<int32_t> len = {static_cast<int32_t>(s.size())};
      greedy(s, static_cast<int64_t>(s.size()), len);
    };
    one(singles[0]);
    one(singles[1]);
    auto times =
        timed(o.decode_single, o.decode_budget, [&](int i) { one(singles[i % singles.size()]); });
    double total = sum(times);
    auto n = static_cast<double>(times.size());
    line({{"what", "greedy_decode"},
          {"compute", o.compute},
          {"batch", 1},
          {"max_len", o.max_len},
          {"sentences", times.size()},
          {"sentences_per_s", round_to(n / total, 2)},
          {"tokens_per_s", round_to(static_cast<double>(o.max_len) * n / total, 1)},
          {"median_sentence_ms", round_to(median(times) * 1e3, 2)},
          {"maxrss_mb", maxrss_mb()}});
  }
}

}  // namespace heed
