// The seq2seq benchmarks (workloads and fields in the header): one measurement loop over the
// Seq2SeqModel interface, the model and the peer's fields chosen by --model.
// Leaves out: the peer's numpy/torch random streams (the data are drawn from the same
// distributions with heed's RNG, so lengths and tokens differ sentence by sentence, not in law).
#include "heed/bench/seq2seq_bench.h"

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
#include "heed/kernels/vmath.h"
#include "heed/models/registry.h"
#include "heed/models/rnn_seq2seq.h"
#include "heed/models/transformer_seq2seq.h"
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

// A peer's workload: its model (a registered family's config), the fields of its JSON lines
// and its optimiser.
struct PeerWorkload {
  Seq2SeqConfig model;
  nlohmann::json base;        // the peer's config fields
  OptimizerConfig optimizer;  // Adam as the peer sets it
  float lr = 1e-3f;
  nlohmann::json decode_extra;  // fields of the decoding lines
};

// The model of bahdanau_seq2seq.py and its JSON fields; Adam 1e-3
PeerWorkload rnn_workload(const Seq2SeqBenchOptions& o) {
  const float dropout = o.dropout < 0 ? 0.5f : o.dropout;
  RnnSeq2SeqConfig c;
  c.encoder = RnnEncoderConfig{.cell = CellKind::Gru,
                               .vocab = o.src_vocab,
                               .embed = o.emb,
                               .hidden = o.enc_hid,
                               .layers = 1,
                               .bidirectional = true,
                               .dropout = dropout};
  c.tgt_vocab = o.tgt_vocab;
  c.tgt_embed = o.emb;
  c.dec_hidden = o.dec_hid;
  c.attention = AttentionKind::Bahdanau;
  c.attn_dim = o.dec_hid;
  c.dropout = dropout;
  return {.model = c,
          .base = {{"bench", "bahdanau_seq2seq"},
                   {"config", "default"},
                   {"attn", "split"},
                   {"emb", o.emb},
                   {"enc_hid", o.enc_hid},
                   {"dec_hid", o.dec_hid}},
          .optimizer = {.kind = OptimizerConfig::Kind::Adam},
          .lr = 1e-3f,
          .decode_extra = nlohmann::json::object()};
}

// The model of transformer_seq2seq.py and its JSON fields; Adam 5e-4, betas 0.9 / 0.98, eps
// 1e-9; its decoding lines say that heed keeps a key/value cache (the peer: false)
PeerWorkload transformer_workload(const Seq2SeqBenchOptions& o) {
  TransformerSeq2SeqConfig c;
  c.src_vocab = o.src_vocab;
  c.tgt_vocab = o.tgt_vocab;
  c.layer = {.d_model = o.d_model,
             .heads = o.heads,
             .ff = o.ff,
             .dropout = o.dropout < 0 ? 0.1f : o.dropout,
             .norm = NormPlacement::Post,
             .activation = FfnActivation::Relu};
  c.enc_layers = o.enc_layers;
  c.dec_layers = o.dec_layers;
  c.max_positions = 512;
  c.tie_output = false;  // nn.Linear(d_model, tgt_vocab)
  return {.model = c,
          .base = {{"bench", "transformer_seq2seq"},
                   {"d_model", o.d_model},
                   {"heads", o.heads},
                   {"layers", std::to_string(o.enc_layers) + "+" + std::to_string(o.dec_layers)},
                   {"ff", o.ff}},
          .optimizer = {.kind = OptimizerConfig::Kind::Adam, .beta2 = 0.98f, .eps = 1e-9f},
          .lr = 5e-4f,
          .decode_extra = {{"kv_cache", true}}};
}

// The families with a peer workload
struct Peer {
  const char* family;
  PeerWorkload (*workload)(const Seq2SeqBenchOptions&);
};
constexpr Peer kPeers[] = {{RnnSeq2SeqConfig::kFamily, rnn_workload},
                           {TransformerSeq2SeqConfig::kFamily, transformer_workload}};

}  // namespace

void run_seq2seq_bench(const Seq2SeqBenchOptions& o, std::ostream& out) {
  const Peer* peer = nullptr;
  for (const Peer& p : kPeers)
    if (o.model == p.family) peer = &p;
  check(peer != nullptr, "bench: no peer workload for the model ", o.model);
  const PeerWorkload w = peer->workload(o);
  ParameterStore params;
  Rng rng(o.seed);
  nlohmann::json base = w.base;
  std::unique_ptr<Seq2SeqModel> model_ptr = make_seq2seq_model(w.model, Scope(params, rng));
  const Seq2SeqModel& model = *model_ptr;
  base.update({{"threads", threads()}, {"heed", HEED_VERSION}, {"tag", ""}});
  auto line = [&](const nlohmann::json& extra) {
    nlohmann::json j = base;
    j.update(extra);
    bench::write_line(out, j);
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
    Optimizer opt(w.optimizer, params);  // the peer's
    const float lr = w.lr;
    Graph g(Mode::Train, o.seed);
    g.set_precision(o.precision);
    double loss = 0;
    auto step = [&](const Seq2SeqBatch& b) {
      Var l = model.loss(g, b);
      loss = l.value().data()[0];
      g.backward(l);
      opt.step(lr, clip_scale(grad_norm(params), 1.0));
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
          {"precision", name_of(o.precision)},
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
  params.prepare_for_inference(o.compute == ComputeType::Int8);
  // greedy decoding of exactly max_len steps (no early stop, as the peer)
  auto greedy = [&](const Seq2SeqBatch& b) {
    Graph g(Mode::Inference);
    auto decoder = model.start_decoding(g, b, o.max_len, {.wanted = false});
    std::vector<int32_t> tok(b.B, Vocab::kBos);
    const int64_t V = model.tgt_vocab();
    for (int64_t t = 0; t < o.max_len; ++t) {
      // the peer's greedy search: argmax of the logits (no softmax)
      const float* lp = decoder->step(tok, Scores::LogitsOnly).scores;  // [B, V]
      for (int64_t i = 0; i < b.B; ++i) tok[i] = static_cast<int32_t>(vmath::argmax(lp + i * V, V));
    }
  };
  auto decode_line = [&](nlohmann::json j) {
    j.update(w.decode_extra);
    line(j);
  };
  if (!o.skip_dec128) {
    greedy(data[0]);  // warm-up
    auto times =
        timed(o.decode_batches, o.decode_budget, [&](int i) { greedy(data[i % data.size()]); });
    double total = sum(times);
    auto n = static_cast<double>(times.size());
    decode_line(
        {{"what", "greedy_decode"},
         {"compute", name_of(o.compute)},
         {"batch", o.batch},
         {"max_len", o.max_len},
         {"batches", times.size()},
         {"sentences_per_s", round_to(static_cast<double>(o.batch) * n / total, 2)},
         {"tokens_per_s", round_to(static_cast<double>(o.batch * o.max_len) * n / total, 1)},
         {"median_batch_ms", round_to(median(times) * 1e3, 1)},
         {"maxrss_mb", maxrss_mb()}});
  }
  if (!o.skip_dec1) {
    std::vector<Seq2SeqBatch> singles;  // the first two sentences of every batch
    for (const auto& b : data)
      for (int64_t k = 0; k < 2; ++k) {
        std::vector<int32_t> s;
        for (int64_t t = 0; t < b.src_lengths[k]; ++t) s.push_back(b.src[t * b.B + k]);
        singles.push_back(make_batch({s}, {{}}, false));
      }
    greedy(singles[0]);
    greedy(singles[1]);
    auto times = timed(o.decode_single, o.decode_budget,
                       [&](int i) { greedy(singles[i % singles.size()]); });
    double total = sum(times);
    auto n = static_cast<double>(times.size());
    decode_line({{"what", "greedy_decode"},
                 {"compute", name_of(o.compute)},
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
