// The toy reversal model's training (see the header).
#include "heed/train/toy_reverse_demo.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ostream>
#include <string>

#include "heed/autograd/ops.h"
#include "heed/train/optimizer.h"
#include "heed/util/error.h"

namespace heed::toy {

namespace {
std::string show(const std::vector<int32_t>& ids) {
  std::string s;
  for (int32_t id : ids) s += id >= kFirstSymbol ? static_cast<char>('a' + id - kFirstSymbol) : '?';
  return s;
}
}  // namespace

ReverseDemoResult run_reverse_demo(const ReverseDemoOptions& o, std::ostream* log) {
  auto start = std::chrono::steady_clock::now();
  Rng rng(o.seed);
  ParameterStore params;
  GruSeq2SeqConfig mc = o.model;
  mc.vocab = o.task.symbols + kFirstSymbol;
  GruSeq2Seq model(mc, Scope(params, rng, "toy"));
  Optimizer opt({.kind = OptimizerConfig::Kind::Adam}, params);
  Graph g(Mode::Train, o.seed);
  ReverseDemoResult r;
  double avg = 0;
  int64_t target_tokens = 0;
  for (int64_t step = 1; step <= o.steps; ++step) {
    Batch b = sample_batch(o.task, o.batch, rng);
    target_tokens += (b.S + 1) * b.B;
    g.reseed(o.seed * 1000003 + static_cast<uint64_t>(step));
    Var loss = model.loss(g, b);
    double l = loss.value().data()[0];
    g.backward(loss);
    opt.step(o.lr, clip_scale(grad_norm(params), o.clip));
    g.clear();
    avg = step == 1 ? l : 0.98 * avg + 0.02 * l;
    if (log && (step % 100 == 0 || step == o.steps)) {
      double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      char line[160];
      std::snprintf(line, sizeof line, "step %5lld/%lld  loss %.4f  %7.0f tgt tok/s  ETA %4.1f s\n",
                    static_cast<long long>(step), static_cast<long long>(o.steps), avg,
                    static_cast<double>(target_tokens) / secs,
                    secs / static_cast<double>(step) * static_cast<double>(o.steps - step));
      *log << line << std::flush;
    }
  }
  r.final_loss = avg;
  // Evaluation on fresh sequences, in inference mode (no closures recorded).
  Graph eval(Mode::Inference);
  Rng test_rng(o.seed + 7919);
  int64_t right = 0, total = 0;
  for (int k = 0; k < 10; ++k) {
    Batch b = sample_batch(o.task, 100, test_rng);
    auto hyp = model.greedy(eval, b, b.S + 3);
    for (int64_t i = 0; i < b.B; ++i) {
      std::vector<int32_t> src, ref;
      for (int64_t t = 0; t < b.S; ++t) src.push_back(b.src[t * b.B + i]);
      for (int64_t t = 0; t < b.S; ++t) ref.push_back(b.tgt[t * b.B + i]);
      right += hyp[i] == ref;
      ++total;
      if (log && k == 0 && i < o.examples)
        *log << "  " << show(src) << "  ->  " << show(hyp[i]) << (hyp[i] == ref ? "" : "   (wrong)")
             << "\n";
    }
    eval.clear();
  }
  r.sequence_accuracy = static_cast<double>(right) / static_cast<double>(total);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (log)
    *log << "sequence accuracy on " << total << " unseen sequences: " << 100.0 * r.sequence_accuracy
         << " %  (" << r.seconds << " s)\n";
  return r;
}

}  // namespace heed::toy
