// The `heed` command line: one CLI11 app, a typed options struct per subcommand (commands.h),
// parsed once here at the edge; then the library runs.
// Leaves out: any model logic (that lives in libheed).
#include <CLI/CLI.hpp>

#include <iostream>

#include "commands.h"
#include "heed/kernels/parallel.h"
#include "heed/version.h"

namespace {

int run(int argc, char** argv) {
  CLI::App app{"heed: train, run and inspect attention-based sequence models on the CPU"};
  app.set_version_flag("--version", std::string("heed ") + HEED_VERSION);
  app.require_subcommand(1);
  int threads = 0;
  app.add_option("--threads", threads, "Threads for all kernels and GEMMs (0 = all cores)")
      ->check(CLI::NonNegativeNumber);
  heed::cli::DemoCommand demo;
  heed::cli::ScoreCommand score;
  heed::cli::TrainCommand train;
  heed::cli::TranslateCommand translate;
  heed::cli::BenchCommand bench;
  heed::cli::SplitCommand split;
  heed::cli::AverageCommand average;
  heed::cli::ClassifyCommand classify;
  heed::cli::AttentionCommand attention;
  heed::cli::ReportCommand report;
  demo.add(app, threads);
  train.add(app, threads);
  translate.add(app, threads);
  score.add(app);
  bench.add(app, threads);
  split.add(app);
  average.add(app);
  classify.add(app, threads);
  attention.add(app, threads);
  report.add(app, threads);
  CLI11_PARSE(app, argc, argv);
  heed::set_threads(threads);
  if (*demo.app) return demo.run();
  if (*score.app) return score.run();
  if (*train.app) return train.run();
  if (*translate.app) return translate.run();
  if (*bench.app) return bench.run();
  if (*split.app) return split.run();
  if (*average.app) return average.run();
  if (*classify.app) return classify.run();
  if (*attention.app) return attention.run();
  if (*report.app) return report.run();
  return 0;
}

}  // namespace

// heed::Error (bad input, with file/line/shape) and any other exception end in one message.
int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "heed: error: " << e.what() << "\n";
    return 2;
  }
}
