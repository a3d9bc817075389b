// The `heed` command line: parses flags once into typed options and calls the library.
// Leaves out: any model logic (that lives in libheed).
#include <CLI/CLI.hpp>

#include <iostream>

#include "heed/kernels/parallel.h"
#include "heed/models/toy_reverse.h"
#include "heed/util/error.h"
#include "heed/version.h"

int run(int argc, char** argv) {
  CLI::App app{"heed: train, run and inspect attention-based sequence models on the CPU"};
  app.set_version_flag("--version", std::string("heed ") + HEED_VERSION);
  app.require_subcommand(1);
  int threads = 0;
  app.add_option("--threads", threads, "Threads for all kernels and GEMMs (0 = all cores)")
      ->check(CLI::NonNegativeNumber);

  heed::toy::ReverseDemoOptions demo;
  auto* demo_cmd = app.add_subcommand(
      "demo", "Train a small GRU encoder-decoder to reverse random sequences and show its outputs");
  demo_cmd->add_option("--steps", demo.steps, "Training steps (batches)")->capture_default_str();
  demo_cmd->add_option("--batch", demo.batch, "Sequences per batch")->capture_default_str();
  demo_cmd->add_option("--lr", demo.lr, "Adam learning rate")->capture_default_str();
  demo_cmd->add_option("--seed", demo.seed, "Random seed (runs are reproducible)")
      ->capture_default_str();
  demo_cmd->add_option("--hidden", demo.model.hidden, "GRU hidden size")->capture_default_str();
  demo_cmd->add_option("--max-len", demo.task.max_len, "Longest sequence")->capture_default_str();
  demo_cmd->add_option("--threads", threads, "Threads (0 = all cores)");

  CLI11_PARSE(app, argc, argv);
  heed::set_threads(threads);
  if (*demo_cmd) {
    std::cout << "heed demo: a GRU encoder-decoder (Cho et al. 2014) learns to reverse sequences "
                 "of "
              << demo.task.min_len << "-" << demo.task.max_len << " symbols, " << heed::threads()
              << " thread(s)\n";
    auto r = heed::toy::run_reverse_demo(demo, &std::cout);
    return r.sequence_accuracy > 0.5 ? 0 : 1;
  }
  return 0;
}

// heed::Error (bad input, with file/line/shape) and any other exception end in one message.
int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "heed: error: " << e.what() << "\n";
    return 2;
  }
}
