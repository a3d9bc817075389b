// `heed bench conv` (see the header).
#include "heed/bench/conv_bench.h"

#include <algorithm>
#include <optional>
#include <ostream>
#include <set>

#include <nlohmann/json.hpp>

#include "heed/autograd/ops.h"
#include "heed/bench/measure.h"
#include "heed/data/vocab.h"
#include "heed/kernels/parallel.h"
#include "heed/kernels/random.h"
#include "heed/models/sentence_classifier.h"
#include "heed/nn/gated_conv.h"
#include "heed/util/error.h"
#include "heed/util/names.h"

namespace heed {

using bench::Clock;
using bench::round_to;
using bench::since;
using bench::uniform_in;
using bench::write_line;

namespace {

void kim_bench(const ConvBenchOptions& o, Rng& rng, std::ostream& out) {
  constexpr int64_t kVocab = 16000, kClasses = 5, kBatch = 50;
  ClassifierConfig c;
  c.encoder = KimEncoderConfig{.vocab = kVocab, .embed = 300, .widths = {3, 4, 5}, .maps = 100};
  c.pooling = Pooling::Max;
  c.mlp_hidden = 0;
  c.classes = kClasses;
  c.dropout = 0.5f;
  ParameterStore params;
  Rng init(o.seed);
  const SentenceClassifier model(c, Scope(params, init));
  std::vector<ClassifyBatch> batches;
  for (int i = 0; i < o.steps + 3; ++i) {
    std::vector<std::vector<int32_t>> s(kBatch);
    std::vector<int32_t> y(kBatch);
    for (int64_t b = 0; b < kBatch; ++b) {
      const int64_t n = uniform_in(rng, 5, 50);
      for (int64_t t = 0; t < n; ++t)
        s[b].push_back(static_cast<int32_t>(uniform_in(rng, Vocab::kSpecials, kVocab - 1)));
      y[b] = static_cast<int32_t>(rng.below(kClasses));
    }
    batches.push_back(make_classify_batch(s, y));
  }
  Optimizer opt({.kind = o.kim_optimizer}, params);
  const float lr = o.kim_optimizer == OptimizerConfig::Kind::Adadelta ? 1.f : 1e-3f;
  Graph g(Mode::Train, o.seed);
  g.set_precision(o.precision);
  Clock::time_point t0;
  for (int i = 0; i < o.steps + 3; ++i) {
    if (i == 3) t0 = Clock::now();
    g.backward(model.loss(g, batches[static_cast<size_t>(i)]));
    opt.step(lr);
    g.clear();
  }
  const double train = static_cast<double>(kBatch * o.steps) / since(t0);
  Graph infer(Mode::Inference);
  int64_t checksum = 0;  // the predictions are used, so nothing is optimised away
  t0 = Clock::now();
  for (int i = 0; i < o.steps; ++i) {
    Var logits = model.forward(infer, batches[static_cast<size_t>(i)]).logits;  // [B, C]
    for (int64_t b = 0; b < kBatch; ++b) {
      const float* row = logits.value().data() + b * kClasses;
      checksum += std::max_element(row, row + kClasses) - row;
    }
    infer.clear();
  }
  const double inference = static_cast<double>(kBatch * o.steps) / since(t0);
  write_line(out, nlohmann::json{
                      {"bench", "kim_cnn"},
                      {"train_sent_per_s", round_to(train, 1)},
                      {"infer_sent_per_s", round_to(inference, 1)},
                      {"optimizer",
                       o.kim_optimizer == OptimizerConfig::Kind::Adadelta ? "adadelta" : "adam"},
                      {"precision", name_of(o.precision)},
                      {"predicted_class_sum", checksum},
                      {"threads", threads()}});
}

// The peer's Tcn: embeddings, the gated stack with 1x1 projections, the output layer.
class TcnLm {
 public:
  TcnLm(int64_t vocab, const GatedConvConfig& c, const Scope& s) : V_(vocab), C_(c.channels) {
    embed_ = &s.param("embed", {vocab, C_}, Init::normal(1.f), /*row_sparse=*/true);
    stack_.emplace(c, s / "stack");
    W_ = &s.param("out/W", {vocab, C_}, Init::glorot_uniform());
    b_ = &s.param("out/b", {vocab}, Init::zeros());
  }
  // x [B, T + 1] token ids: mean cross-entropy of predicting x[:, 1:] from x[:, :-1]
  Var loss(Graph& g, const std::vector<int32_t>& x, int64_t B, int64_t T) const {
    int32_t* in = g.arena().array<int32_t>(static_cast<size_t>(B * T));
    int32_t* next = g.arena().array<int32_t>(static_cast<size_t>(B * T));
    for (int64_t b = 0; b < B; ++b)
      for (int64_t t = 0; t < T; ++t) {
        in[b * T + t] = x[static_cast<size_t>(b * (T + 1) + t)];
        next[b * T + t] = x[static_cast<size_t>(b * (T + 1) + t + 1)];
      }
    Var h = embedding(g.param(*embed_), {in, static_cast<size_t>(B * T)}, Shape{B, T});
    h = stack_->forward(g, h);                           // [B, T, C]
    Var logits = linear(h, g.param(*W_), g.param(*b_));  // [B, T, V]
    return cross_entropy(logits, {next, static_cast<size_t>(B * T)});
  }
  // greedy generation from token 0, one position at a time through the layers' queues
  std::vector<int32_t> generate(int64_t n) const {
    GatedConvStack::Cache cache = stack_->start(1);
    std::vector<float> h(static_cast<size_t>(C_)), logits(static_cast<size_t>(V_));
    std::vector<int32_t> out;
    int32_t token = 0;
    for (int64_t i = 0; i < n; ++i) {
      std::copy_n(embed_->value.data() + token * C_, C_, h.data());
      stack_->step(cache, h.data(), h.data());
      GatedConvStack::affine(cache, GatedConvStack::affine_of(*W_, *b_), h.data(), logits.data());
      token = static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
      out.push_back(token);
    }
    return out;
  }

 private:
  int64_t V_, C_;
  Parameter *embed_, *W_, *b_;  // [V, C], [V, C], [V]
  std::optional<GatedConvStack> stack_;
};

void tcn_bench(const ConvBenchOptions& o, Rng& rng, std::ostream& out) {
  constexpr int64_t kVocab = 10000;
  GatedConvConfig c{.channels = o.channels,
                    .kernel = o.kernel,
                    .dilations = {},
                    .causal = true,
                    .projection = true,
                    .residual_scale = 1.f};
  for (int64_t l = 0; l < o.layers; ++l) c.dilations.push_back(int64_t{1} << (l % 8));
  ParameterStore params;
  Rng init(o.seed);
  const TcnLm model(kVocab, c, Scope(params, init));
  std::vector<std::vector<int32_t>> data;
  for (int i = 0; i < o.steps + 3; ++i) {
    std::vector<int32_t> x(static_cast<size_t>(o.batch * (o.len + 1)));
    for (int32_t& id : x) id = static_cast<int32_t>(rng.below(kVocab));
    data.push_back(std::move(x));
  }
  Optimizer opt({}, params);
  Graph g(Mode::Train, o.seed);
  g.set_precision(o.precision);
  Clock::time_point t0;
  for (int i = 0; i < o.steps + 3; ++i) {
    if (i == 3) t0 = Clock::now();
    g.backward(model.loss(g, data[static_cast<size_t>(i)], o.batch, o.len));
    opt.step(1e-3f);
    g.clear();
  }
  const double train = static_cast<double>(o.batch * o.len * o.steps) / since(t0);
  params.prepare_for_inference(o.compute == ComputeType::Int8);
  t0 = Clock::now();
  const std::vector<int32_t> generated = model.generate(o.gen_len);
  const double gen = static_cast<double>(o.gen_len) / since(t0);
  write_line(out, nlohmann::json{{"bench", "tcn"},
                                 {"channels", o.channels},
                                 {"kernel", o.kernel},
                                 {"layers", o.layers},
                                 {"receptive_field", c.receptive_field()},
                                 {"batch", o.batch},
                                 {"T", o.len},
                                 {"train_tok_per_s", round_to(train, 1)},
                                 {"precision", name_of(o.precision)},
                                 {"gen_len", o.gen_len},
                                 {"gen_tok_per_s", round_to(gen, 1)},
                                 {"gen_compute", name_of(o.compute)},
                                 {"generated_distinct",
                                  std::set<int32_t>(generated.begin(), generated.end()).size()},
                                 {"threads", threads()}});
}

}  // namespace

void run_conv_bench(const ConvBenchOptions& o, std::ostream& out) {
  check(o.only.empty() || o.only == "kim" || o.only == "tcn",
        "bench conv: --only kim or tcn, got '", o.only, "'");
  check(o.steps >= 1 && o.layers >= 1 && o.batch >= 1 && o.len >= 1 && o.gen_len >= 1,
        "bench conv: --steps, --layers, --batch, --len and --gen-len must be positive");
  Rng rng(o.seed);
  if (o.only.empty() || o.only == "kim") kim_bench(o, rng, out);
  if (o.only.empty() || o.only == "tcn") tcn_bench(o, rng, out);
}

}  // namespace heed
