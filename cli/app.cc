// The `heed` command line (see commands.h): one CLI11 app, a typed options struct per
// subcommand, parsed once here at the edge; then the library runs.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "commands.h"
#include "config_file.h"
#include "heed/kernels/parallel.h"
#include "heed/kernels/quantize.h"
#include "heed/version.h"
#include "suggest.h"

namespace heed::cli {

void check_stdout() {
  errno = 0;
  std::cout.flush();
  const bool flushed = std::fflush(stdout) == 0;
  if (flushed && std::cout.good() && std::ferror(stdout) == 0) return;
  // the reason, when this flush was the failing write (an earlier one's errno is gone)
  const int e = errno;
  heed::fail("<stdout>: write failed", e != 0 ? " (" + std::string(std::strerror(e)) + ")" : "");
}

void warn_if_int8_inexact(const char* command, ComputeType compute) {
  if (compute == ComputeType::Int8 && !kernels::int8_exact())
    std::cerr << command
              << ": warning: this CPU has no VNNI: --compute-type int8 runs its products as fp32 "
                 "GEMMs on the quantized values (the same outputs, no faster than float32)\n";
}

namespace {

// `heed [global flags] bench train ARGS` is `heed [global flags] train --bench ARGS`: the
// training workload takes all of heed train's flags and recipes' [train] sections.
std::vector<std::string> expand_bench_train(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  for (size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--threads" || args[i] == "--config") {
      ++i;  // its value
      continue;
    }
    if (args[i].starts_with("-")) continue;
    if (args[i] == "bench" && i + 1 < args.size() && args[i + 1] == "train") {
      args[i] = "train";
      args[i + 1] = "--bench";
    }
    break;  // the subcommand
  }
  return args;
}

}  // namespace

int run(int argc, char** argv) {
  CLI::App app{"heed: train, run and inspect attention-based sequence models on the CPU"};
  app.set_version_flag("--version", std::string("heed ") + HEED_VERSION);
  app.require_subcommand(1);
  int threads = 0;
  app.add_option("--threads", threads, "Threads for all kernels and GEMMs (0 = all cores)")
      ->check(CLI::NonNegativeNumber);
  app.set_config("--config", "",
                 "Read options from a TOML file, one section per subcommand ([train], "
                 "[translate], ...) of `key = value` lines named as the flags (`model = "
                 "\"transformer\"`, `share-embeddings = true`); flags on the command line win. "
                 "Also accepted after the subcommand");
  app.allow_config_extras(CLI::config_extras_mode::error);  // a misspelt key is an error
  bool dump_config = false;
  app.add_flag("--dump-config", dump_config,
               "Print the options given (on the command line and by --config) as a --config "
               "file, and exit")
      ->configurable(false);
  app.fallthrough();  // --config and --dump-config also after the subcommand
  // (each subcommand's help says how it reads --config; CLI11 would print this under it too)
  app.footer("recipes/ holds the --config files of the published results.");
  heed::cli::DemoCommand demo;
  heed::cli::ScoreCommand score;
  heed::cli::TrainCommand train;
  heed::cli::TranslateCommand translate;
  heed::cli::BenchCommand bench;
  heed::cli::SplitCommand split;
  heed::cli::AverageCommand average;
  heed::cli::ExportCommand export_;
  heed::cli::ImportCommand import_;
  heed::cli::ClassifyCommand classify;
  heed::cli::AttentionCommand attention;
  heed::cli::ReportCommand report;
  heed::cli::LmCommand lm;
  heed::cli::FeaturesCommand features;
  heed::cli::TranscribeCommand transcribe;
  heed::cli::ServeCommand serve;
  demo.add(app, threads);
  train.add(app, threads);
  translate.add(app, threads);
  score.add(app);
  bench.add(app, threads);
  split.add(app);
  average.add(app);
  export_.add(app);
  import_.add(app);
  classify.add(app, threads);
  attention.add(app, threads);
  report.add(app, threads);
  lm.add(app);
  features.add(app);
  transcribe.add(app, threads);
  serve.add(app, threads);
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; }))
    sub->footer(sub->get_footer() + (sub->get_footer().empty() ? "" : "\n\n") +
                "Options can also come from a file: --config FILE.toml reads its [" +
                sub->get_name() + "] section (`key = value`, named as the flags above; the " +
                "command line wins), and --dump-config prints the options given as such a file.");
  std::vector<std::string> args;
  try {
    args = expand_bench_train(argc, argv);
    std::vector<const char*> pointers;
    pointers.reserve(args.size());
    for (const auto& a : args) pointers.push_back(a.c_str());
    app.parse(static_cast<int>(pointers.size()), pointers.data());
  } catch (const CLI::ConfigError& e) {
    const auto files = app.get_config_ptr()->as<std::vector<std::string>>();
    std::string message = heed::cli::config_error(files, e.what());
    if (message.empty()) {  // CLI11's own words, after the file(s) they are about
      for (const auto& f : files) message += (message.empty() ? "" : ", ") + f;
      message += std::string(message.empty() ? "" : ": ") + e.what();
    }
    throw UsageError(message, false);
  } catch (const CLI::ParseError& e) {
    // --help and --version end here, as CLI11 prints them; a bad command line is an error like
    // any other: one format, exit 2
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);
    const Suggestion hint = did_you_mean(app, {args.begin() + (args.empty() ? 0 : 1), args.end()});
    if (hint.text.empty()) throw UsageError(e.what(), true);
    throw UsageError(hint.replaces ? hint.text : hint.text + " (" + e.what() + ")", true);
  }
  if (dump_config) {
    std::cout << heed::cli::config_sections(app.config_to_str(false, false));
    heed::cli::check_stdout();
    return 0;
  }
  // more threads than this the machine cannot run (OpenMP then fails, or crawls)
  const int max_threads = 8 * static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
  heed::check(threads >= 0 && threads <= max_threads, "--threads ", threads,
              ": expected 0 (all cores) to ", max_threads, " (8 per core of this machine)");
  // a stream's steps are products of a few rows, where a pool's barriers cost more than they
  // share out: streaming runs on one thread unless --threads says otherwise
  const bool threads_given =
      app.get_option("--threads")->count() > 0 ||
      (*transcribe.app && transcribe.app->get_option("--threads")->count() > 0);
  heed::set_threads(*transcribe.app && transcribe.online && !threads_given ? 1 : threads);
  int rc = 0;
  if (*demo.app) rc = demo.run();
  if (*score.app) rc = score.run();
  if (*train.app) rc = train.run();
  if (*translate.app) rc = translate.run();
  if (*bench.app) rc = bench.run();
  if (*split.app) rc = split.run();
  if (*average.app) rc = average.run();
  if (*export_.app) rc = export_.run();
  if (*import_.app) rc = import_.run();
  if (*classify.app) rc = classify.run();
  if (*attention.app) rc = attention.run();
  if (*report.app) rc = report.run();
  if (*lm.app) rc = lm.run();
  if (*features.app) rc = features.run();
  if (*transcribe.app) rc = transcribe.run();
  if (*serve.app) rc = serve.run();
  heed::cli::check_stdout();
  return rc;
}

}  // namespace heed::cli
