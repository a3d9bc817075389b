// `heed report`: one self-contained HTML page about a trained model (no network access needed
// to view it: styles inline, figures as inline SVG): its config, training curves from its
// train.jsonl (loss and dev metric against steps and minutes), its best dev score, a test score
// when given a test set, and a sample of inputs with outputs, references and attention heatmaps.
// Given several sequence-to-sequence models, the page is about their ensemble as `heed translate
// --model A B` decodes it: each member's config and curves side by side, the ensemble's test
// score and outputs, heatmaps of the mean of the members' attention. Given online decodings of
// the test set (--latency), a section plots their quality against their latency: BLEU (G2P:
// WER) against AL for translation, WER against the mean word delay for streaming recognition.
// Leaves out: decoding and scoring code of its own (decode/, metrics/), JavaScript.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <span>
#include <string>
#include <vector>

#include "heed/decode/beam_search.h"
#include "heed/util/names.h"

namespace heed::viz {

// Which test inputs the page shows: evenly spaced through the file, the first ones, a seeded
// random draw, or the worst (lowest sentence BLEU; G2P: highest PER; classifier: lowest
// probability of the reference label), worst first.
enum class SampleChoice { Spread, First, Random, Worst };
std::span<const Named<SampleChoice>> names(SampleChoice);  // "spread" | "first" | ...

struct ReportOptions {
  std::vector<std::string> model_dirs;  // one model, or the members of an ensemble
  std::string src;  // test inputs: sentences, CMUdict entries (G2P) or labelled lines
                    // (classifier); empty: no test section and no samples
  std::string ref;  // translation: references line-parallel to src (G2P, classifier: in src)
  std::string hyp;  // outputs already decoded for src (heed translate; G2P: its CMUdict
                    // entries); empty: decode here
  BeamOptions search{.beam = 5};
  int samples = 8;  // inputs shown with their heatmaps and each one's score
  SampleChoice sample_choice = SampleChoice::Spread;
  uint64_t seed = 1;  // SampleChoice::Random's draw
  // `heed translate --online --latency-out` files decoded from src (by this model or others):
  // one point each on a curve of quality (BLEU against ref; G2P: WER) against AL
  // (a recognizer's: `heed transcribe --online` JSON lines of the corpus src, WER against its
  // transcripts and word delay against `timings`, the corpus's *.align.jsonl)
  std::vector<std::string> latency;
  std::string timings;
  std::string title;  // page title (default: the model directories)
};

// Writes the page to `out` atomically; progress lines go to `log`.
void write_report(const ReportOptions& o, const std::string& out, std::ostream& log);

}  // namespace heed::viz
