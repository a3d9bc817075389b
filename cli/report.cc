// `heed report`: a trained model's self-contained HTML page (viz/report.h).
// Leaves out: everything the page shows (viz/report.cc gathers it).
#include <iostream>

#include "commands.h"
#include "heed/decode/limits.h"

namespace heed::cli {

void ReportCommand::add(CLI::App& parent, int& threads) {
  app = parent.add_subcommand(
      "report",
      "Write one self-contained HTML page about a trained model: config, training curves, dev "
      "and test scores, and sample outputs with their attention heatmaps");
  app->add_option("--model", options.model_dirs,
                  "Model directory (heed train); several (--model A B): a page about their "
                  "ensemble as `heed translate --model A B` decodes it (each member's config and "
                  "curves, the ensemble's scores and the mean of its members' attention)")
      ->required();
  app->add_option("--out", out, "HTML file to write")->required();
  app->add_option("--src", options.src,
                  "Test inputs for the scores and samples: source sentences, a CMUdict file "
                  "(G2P) or a labelled file (classifier)");
  app->add_option("--ref", options.ref, "Translation: references line-parallel to --src");
  app->add_option("--hyp", options.hyp,
                  "Outputs already decoded for --src (heed translate), scored instead of "
                  "decoding again (the samples' heatmaps are always decoded)");
  app->add_option("--beam", options.search.beam, "Beam size for decoding (1: greedy)")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, limits::kMaxBeam));
  app->add_option("--length-penalty", options.search.length_penalty,
                  "Beam: rank finished outputs by log p / length^alpha")
      ->capture_default_str();
  app->add_option("--samples", samples,
                  "Test inputs shown with their outputs, heatmaps and each one's own score "
                  "(sentence BLEU; G2P: PER; classifier: p of the reference label): how many "
                  "(default 8) and which, either or both: spread (evenly through the test set, "
                  "the default), first, random (seeded by --seed) or worst (worst first). "
                  "E.g. --samples worst 20")
      ->expected(1, 2);
  app->add_option("--seed", options.seed, "Seed of --samples random")->capture_default_str();
  app->add_option("--title", options.title, "Page title (default: the model directory)");
  app->add_option("--latency", options.latency,
                  "Online decodings of --src (heed translate --online --latency-out; several: "
                  "other models or policies): a section plots their quality (BLEU against "
                  "--ref; G2P: WER) against their average lagging, with AP and DAL. For a "
                  "recognizer, heed transcribe --online's JSON lines of the corpus --src (other "
                  "models, chunk sizes, lookaheads): WER against the mean word delay (--timings), "
                  "with its p50, p90 and AL in ms")
      ->check(CLI::ExistingFile);
  app->add_option("--timings", options.timings,
                  "A recognizer's --latency: the corpus's word timings (heed-spoken-corpus's "
                  "*.align.jsonl), each word's end in the audio")
      ->check(CLI::ExistingFile);
  app->add_option("--threads", threads, "Threads (0 = all cores)");
}

int ReportCommand::run() const {
  viz::ReportOptions o = options;
  for (const std::string& v : samples) {  // a count, a choice, or both (either order)
    const size_t digits = v.find_first_not_of("0123456789", v.starts_with('-') ? 1 : 0);
    if (digits == std::string::npos && v != "-" && !v.empty()) {
      const long long n = v.size() <= 6 ? std::stoll(v) : 1000000;
      check(n >= 0 && n <= 1000, "--samples: Value ", v, " not in range [0 - 1000]");
      o.samples = static_cast<int>(n);
    } else {
      o.sample_choice = parse_name<viz::SampleChoice>(v, "--samples");
    }
  }
  viz::write_report(o, out, std::cerr);
  std::cerr << "heed report: wrote " << out << "\n";
  return 0;
}

}  // namespace heed::cli
