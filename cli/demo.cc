// `heed demo`: the toy GRU encoder-decoder on sequence reversal.
// Leaves out: real data (heed train).
#include <iostream>

#include "commands.h"
#include "heed/kernels/parallel.h"

namespace heed::cli {

void DemoCommand::add(CLI::App& parent, int& threads) {
  app = parent.add_subcommand(
      "demo", "Train a small GRU encoder-decoder to reverse random sequences and show its outputs");
  app->add_option("--steps", options.steps, "Training steps (batches)")->capture_default_str();
  app->add_option("--batch", options.batch, "Sequences per batch")->capture_default_str();
  app->add_option("--lr", options.lr, "Adam learning rate")->capture_default_str();
  app->add_option("--seed", options.seed, "Random seed (runs are reproducible)")
      ->capture_default_str();
  app->add_option("--hidden", options.model.hidden, "GRU hidden size")->capture_default_str();
  app->add_option("--max-len", options.task.max_len, "Longest sequence")->capture_default_str();
  app->add_option("--threads", threads, "Threads (0 = all cores)");
}

int DemoCommand::run() const {
  std::cout << "heed demo: a GRU encoder-decoder (Cho et al. 2014) learns to reverse sequences of "
            << options.task.min_len << "-" << options.task.max_len << " symbols, "
            << heed::threads() << " thread(s)\n";
  auto r = toy::run_reverse_demo(options, &std::cout);
  return r.sequence_accuracy > 0.5 ? 0 : 1;
}

}  // namespace heed::cli
