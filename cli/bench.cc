// `heed bench WORKLOAD`: the workloads of ../shared/bench/pytorch, printing the peer's JSON
// fields, one line per measurement.
// Leaves out: the engine micro-benchmarks (bench/, Google Benchmark: `make bench`).
#include <iostream>

#include "commands.h"

namespace heed::cli {

void BenchCommand::add(CLI::App& parent, int& threads) {
  app =
      parent.add_subcommand("bench", "Run a benchmark workload (JSON lines, as the PyTorch peer)");
  app->add_option("workload", workload,
                  "rnn-seq2seq (bahdanau_seq2seq.py's workload) | attention (attention_bench.py's)")
      ->required()
      ->check(CLI::IsMember({"rnn-seq2seq", "attention"}));
  app->add_option("--threads", threads, "Threads (0 = all cores)");
  app->add_option("--batch", rnn.batch, "Sentences per batch")->capture_default_str();
  app->add_option("--steps", rnn.steps, "Timed training steps at most")->capture_default_str();
  app->add_option("--warmup", rnn.warmup, "Untimed training steps first")->capture_default_str();
  app->add_option("--train-budget", rnn.train_budget, "Seconds of timed training at most")
      ->capture_default_str();
  app->add_option("--max-len", rnn.max_len, "Greedy decoding steps")->capture_default_str();
  app->add_option("--decode-batches", rnn.decode_batches, "Timed batch decodes")
      ->capture_default_str();
  app->add_option("--decode-single", rnn.decode_single, "Timed batch-1 decodes")
      ->capture_default_str();
  app->add_flag("--skip-train", rnn.skip_train, "Skip the training measurement");
  app->add_flag("--skip-decode-batch", rnn.skip_dec128, "Skip the batched decoding measurement");
  app->add_flag("--skip-decode-single", rnn.skip_dec1, "Skip the batch-1 decoding measurement");
  app->add_option("--compute-type", rnn.compute,
                  "Decoding weights: float32 | int8 (per-row symmetric, oneDNN s8s8s32 GEMM)")
      ->capture_default_str();
  app->add_option("--seed", rnn.seed, "Random seed")->capture_default_str();
  app->add_option("--shapes", attention.shapes, "attention: comma-separated BxHxTxd shapes")
      ->capture_default_str();
  app->add_option("--budget", attention.budget,
                  "attention: target seconds of timed work per configuration")
      ->capture_default_str();
  app->add_option("--tag", attention.tag, "attention: a label copied into every line");
  app->add_option("--child", attention.child,
                  "attention, internal: run one configuration BxHxTxd/mode/mask in this process");
}

int BenchCommand::run() const {
  if (workload == "attention") {
    AttentionBenchOptions a = attention;
    a.seed = rnn.seed;
    run_attention_bench(a, std::cout);
  } else {
    run_rnn_seq2seq_bench(rnn, std::cout);
  }
  return 0;
}

}  // namespace heed::cli
