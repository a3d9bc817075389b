// `heed bench ctc` (see the header).
#include "heed/bench/ctc_bench.h"

#include <algorithm>
#include <ostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "heed/autograd/ops.h"
#include "heed/autograd/ops/ctc.h"
#include "heed/bench/measure.h"
#include "heed/data/vocab.h"
#include "heed/decode/beam_search.h"
#include "heed/kernels/parallel.h"
#include "heed/kernels/random.h"
#include "heed/models/ctc.h"
#include "heed/nn/init.h"
#include "heed/train/optimizer.h"
#include "heed/util/error.h"
#include "heed/util/names.h"

namespace heed {

using bench::Clock;
using bench::round_to;
using bench::since;
using bench::uniform_in;
using bench::write_line;

namespace {

// One "TxBxVxL" shape: the loss forward, then forward + backward.
void loss_bench(const std::string& shape, int reps, Rng& rng, std::ostream& out) {
  int64_t T = 0, B = 0, V = 0, L = 0;
  char x1 = 0, x2 = 0, x3 = 0;
  std::istringstream in(shape);
  in >> T >> x1 >> B >> x2 >> V >> x3 >> L;
  check(in && x1 == 'x' && x2 == 'x' && x3 == 'x' && T > 0 && B > 0 && V > 1 && L > 0 &&
            2 * L + 1 <= T,
        "bench ctc: shape '", shape, "' is not TxBxVxL with 2 L + 1 <= T");
  std::vector<int32_t> in_len(B), tgt_len(B), targets(B * L, 0);
  for (int64_t b = 0; b < B; ++b) {
    tgt_len[b] = static_cast<int32_t>(uniform_in(rng, std::max<int64_t>(1, L / 2), L));
    const int64_t n = uniform_in(rng, T / 2, T);
    in_len[b] =
        static_cast<int32_t>(std::min<int64_t>(T, std::max<int64_t>(n, 2 * tgt_len[b] + 1)));
    for (int32_t k = 0; k < tgt_len[b]; ++k)
      targets[b * L + k] = static_cast<int32_t>(uniform_in(rng, 1, V - 1));
  }
  ParameterStore store;
  Rng init(rng.below(1 << 30));
  Parameter& logits = Scope(store, init).param("logits", {B, T, V}, Init::normal(1.f));
  const CtcOptions o{.blank = 0, .reduction = Reduction::Mean, .zero_infinity = true};
  for (const bool backward : {false, true}) {
    Graph g(backward ? Mode::Train : Mode::Inference);
    auto run = [&] {
      Var l = ctc_loss(g.param(logits), in_len, targets, tgt_len, o);
      if (backward) g.backward(l);
      g.clear();
    };
    run();
    run();
    std::vector<double> ms;
    for (int r = 0; r < reps; ++r) {
      const auto t0 = Clock::now();
      run();
      ms.push_back(1000 * since(t0));
    }
    write_line(out, nlohmann::json{{"bench", "ctc_loss"},
                                   {"T", T},
                                   {"B", B},
                                   {"V", V},
                                   {"L", L},
                                   {"mode", backward ? "fwdbwd" : "fwd"},
                                   {"median_ms", round_to(bench::median(ms), 3)},
                                   {"threads", threads()}});
  }
}

void model_bench(const CtcBenchOptions& o, Rng& rng, std::ostream& out) {
  constexpr int64_t kSrcVocab = 30, kClasses = 70;
  CtcConfig c;
  c.encoder = RnnEncoderConfig{.cell = CellKind::Lstm,
                               .vocab = kSrcVocab,
                               .embed = 64,
                               .hidden = 256,
                               .layers = 2,
                               .bidirectional = true};
  c.tgt_vocab = kClasses;
  c.upsample = o.upsample;
  ParameterStore params;
  Rng init(o.seed);
  const CtcModel model(c, Scope(params, init));
  // batches: letters 3..14, phones letters +- 2 (at least 1), ids past the specials
  std::vector<Seq2SeqBatch> data;
  std::vector<std::vector<std::vector<int32_t>>> sources;
  for (int i = 0; i < o.steps + 3; ++i) {
    std::vector<std::vector<int32_t>> src, tgt;
    for (int64_t b = 0; b < o.batch; ++b) {
      const int64_t n = uniform_in(rng, 3, 14);
      const int64_t m = std::max<int64_t>(1, n + uniform_in(rng, -2, 2));
      std::vector<int32_t> s, t;
      for (int64_t k = 0; k < n; ++k)
        s.push_back(static_cast<int32_t>(uniform_in(rng, Vocab::kSpecials, kSrcVocab - 1)));
      for (int64_t k = 0; k < m; ++k)
        t.push_back(static_cast<int32_t>(uniform_in(rng, Vocab::kSpecials, kClasses - 1)));
      src.push_back(std::move(s));
      tgt.push_back(std::move(t));
    }
    data.push_back(make_batch(src, tgt, false));
    sources.push_back(std::move(src));
  }
  Optimizer opt({}, params);
  Graph g(Mode::Train, o.seed);
  g.set_precision(o.precision);
  int64_t labels = 0;
  Clock::time_point t0;
  for (int i = 0; i < o.steps + 3; ++i) {
    if (i == 3) t0 = Clock::now();
    Var l = model.loss(g, data[i]);
    g.backward(l);
    opt.step(1e-3f, clip_scale(grad_norm(params), 1.0));
    g.clear();
    if (i >= 3) labels += data[i].target_tokens - data[i].B;  // the labels, not the EOS
  }
  const double train_s = since(t0);
  write_line(
      out, nlohmann::json{{"bench", "bilstm_ctc_train"},
                          {"batch", o.batch},
                          {"upsample", o.upsample},
                          {"precision", name_of(o.precision)},
                          {"tgt_labels_per_s", round_to(static_cast<double>(labels) / train_s, 1)},
                          {"steps", o.steps},
                          {"threads", threads()}});
  params.prepare_for_inference(o.compute == ComputeType::Int8);
  int64_t words = 0;
  t0 = Clock::now();
  for (int i = 0; i < o.steps; ++i) {
    const auto hyps = decode_batch(model, sources[i], {.beam = 1}, {.wanted = false});
    words += static_cast<int64_t>(hyps.size());
  }
  const double decode_s = since(t0);
  write_line(out,
             nlohmann::json{{"bench", "bilstm_ctc_greedy"},
                            {"batch", o.batch},
                            {"compute", name_of(o.compute)},
                            {"words_per_s", round_to(static_cast<double>(words) / decode_s, 1)},
                            {"threads", threads()}});
}

}  // namespace

void run_ctc_bench(const CtcBenchOptions& o, std::ostream& out) {
  check(o.reps >= 1 && o.steps >= 1 && o.batch >= 1 && o.upsample >= 1,
        "bench ctc: --reps, --steps, --batch and --upsample must be >= 1");
  Rng rng(o.seed);
  std::istringstream shapes(o.shapes);
  for (std::string s; std::getline(shapes, s, ',');) loss_bench(s, o.reps, rng, out);
  if (!o.skip_model) model_bench(o, rng, out);
}

}  // namespace heed
