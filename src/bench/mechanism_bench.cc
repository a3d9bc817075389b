// `heed bench attention --mechanism` (see the header).
#include "heed/bench/mechanism_bench.h"

#include <memory>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "heed/bench/measure.h"
#include "heed/data/vocab.h"
#include "heed/kernels/parallel.h"
#include "heed/kernels/random.h"
#include "heed/models/rnn_seq2seq.h"
#include "heed/train/optimizer.h"
#include "heed/util/error.h"

namespace heed {

using bench::Clock;
using bench::round_to;
using bench::since;
using bench::write_line;

namespace {

constexpr int32_t kVocab = 8000;

struct Contender {
  std::string name;
  ParameterStore params;
  std::unique_ptr<RnnSeq2Seq> model;
  std::unique_ptr<Optimizer> opt;
  std::vector<double> ms;  // per step, every round
};

RnnSeq2SeqConfig recipe(const std::string& name) {
  const std::string suffix = "+syntactic";
  const bool syntactic = name.size() > suffix.size() && name.ends_with(suffix);
  RnnSeq2SeqConfig c;
  c.encoder = RnnEncoderConfig{.cell = CellKind::Gru, .vocab = kVocab, .embed = 256, .hidden = 256};
  c.tgt_vocab = kVocab;
  c.tgt_embed = 256;
  c.dec_hidden = 512;
  c.attn_dim = 512;
  c.dropout = 0.3f;
  c.attention = parse_attention(syntactic ? name.substr(0, name.size() - suffix.size()) : name);
  c.syntactic_attention = syntactic;
  return c;
}

}  // namespace

void run_mechanism_bench(const MechanismBenchOptions& o, std::ostream& out) {
  check(o.batch >= 1 && o.steps >= 1 && o.rounds >= 1 && o.src_len >= 1 && o.tgt_len >= 1,
        "bench attention --mechanism: batch, steps, rounds and lengths must be >= 1");
  std::vector<std::unique_ptr<Contender>> contenders;
  std::istringstream list(o.mechanisms);
  for (std::string name; std::getline(list, name, ',');) {
    auto c = std::make_unique<Contender>();
    c->name = name;
    Rng init(o.seed);
    c->model = std::make_unique<RnnSeq2Seq>(recipe(name), Scope(c->params, init));
    c->opt = std::make_unique<Optimizer>(OptimizerConfig{}, c->params);
    contenders.push_back(std::move(c));
  }
  check(!contenders.empty(), "bench attention --mechanism: no mechanisms in '", o.mechanisms, "'");
  Rng rng(o.seed);
  auto ids = [&](int64_t n) {
    std::vector<int32_t> v;
    for (int64_t k = 0; k < n; ++k)
      v.push_back(static_cast<int32_t>(Vocab::kSpecials + rng.below(kVocab - Vocab::kSpecials)));
    return v;
  };
  std::vector<Seq2SeqBatch> data;  // the same batches for every mechanism
  for (int i = 0; i < o.steps + 1; ++i) {
    std::vector<std::vector<int32_t>> src, tgt;
    for (int64_t b = 0; b < o.batch; ++b) {
      src.push_back(ids(o.src_len));
      tgt.push_back(ids(o.tgt_len));
    }
    data.push_back(make_batch(src, tgt, false));
  }
  for (int round = 0; round < o.rounds; ++round)
    for (auto& c : contenders) {
      Graph g(Mode::Train, o.seed);
      for (int i = 0; i < o.steps + 1; ++i) {  // step 0 warms up
        const Clock::time_point t0 = Clock::now();
        Var l = c->model->loss(g, data[static_cast<size_t>(i)]);
        g.backward(l);
        c->opt->step(1e-3f, clip_scale(grad_norm(c->params), 1.0));
        g.clear();
        if (i > 0) c->ms.push_back(1000.0 * since(t0));
      }
    }
  const double base = bench::median(contenders.front()->ms);
  for (const auto& c : contenders) {
    const double ms = bench::median(c->ms);
    write_line(out,
               nlohmann::json{{"bench", "attention-mechanism"},
                              {"mechanism", c->name},
                              {"batch", o.batch},
                              {"src_len", o.src_len},
                              {"tgt_len", o.tgt_len},
                              {"ms_per_step", round_to(ms, 2)},
                              {"train_tgt_tok_per_s",
                               round_to(1000.0 * static_cast<double>(o.batch * o.tgt_len) / ms, 1)},
                              {"vs_first", round_to(ms / base, 3)},
                              {"steps", static_cast<int64_t>(c->ms.size())},
                              {"threads", threads()}});
  }
}

}  // namespace heed
