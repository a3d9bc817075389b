// `heed bench decode` (see the header).
#include "heed/bench/decode_bench.h"

#include <algorithm>
#include <memory>
#include <ostream>
#include <vector>

#include <nlohmann/json.hpp>

#include "heed/bench/measure.h"
#include "heed/data/text.h"
#include "heed/decode/translator.h"
#include "heed/util/error.h"
#include "heed/util/fnv1a.h"

namespace heed {

namespace {

struct Cell {
  const Translator* translator;  // the compute type's
  ComputeType compute;
  int beam;
  int64_t batch;
  std::vector<double> seconds{};  // per round
  int64_t tokens = 0;             // output units of one pass (every pass should agree)
  Fnv1a outputs{};                // the hash of the outputs, a line each
};

// The FNV-1a hash of the lines `heed translate` prints (each best hypothesis's output_line and
// a newline): equal outputs, equal hash.
Fnv1a outputs_hash(const Translator& t, const std::vector<TranslationResult>& results,
                   int64_t& tokens) {
  Fnv1a h;
  tokens = 0;
  for (const TranslationResult& r : results) {
    check(!r.hypotheses.empty(), "bench decode: a sentence got no hypothesis");
    const TranslationHypothesis& best = r.hypotheses.front();
    tokens += static_cast<int64_t>(best.tokens.size()) + 1;  // EOS counted, as CTranslate2
    h.add(t.output_line(r, best));
    h.add("\n");
  }
  return h;
}

}  // namespace

void run_decode_bench(const DecodeBenchOptions& o, std::ostream& out) {
  check(!o.model.empty(), "bench decode: --model DIR is required");
  check(!o.src.empty(), "bench decode: --src FILE is required (one source sentence a line)");
  check(o.beam >= 2, "bench decode: --beam ", o.beam, " (the beam cells' width: 2 or more)");
  check(o.batch >= 2, "bench decode: --batch ", o.batch, " (the batched cells': 2 or more)");
  check(o.rounds >= 1, "bench decode: --rounds ", o.rounds, " (1 or more)");
  std::vector<std::string> sentences = read_lines(o.src);
  if (o.max_sentences > 0 && static_cast<int64_t>(sentences.size()) > o.max_sentences)
    sentences.resize(static_cast<size_t>(o.max_sentences));
  check(!sentences.empty(), o.src, ": no sentences to translate");
  const std::vector<std::string> warmup(
      sentences.begin(), sentences.begin() + std::min<ptrdiff_t>(16, std::ssize(sentences)));

  std::vector<ComputeType> computes = {ComputeType::Float32, ComputeType::Int8};
  if (o.compute) computes = {*o.compute};
  std::vector<std::unique_ptr<Translator>> translators;  // loaded and quantised off the clock
  std::vector<Cell> cells;
  for (ComputeType c : computes) {
    translators.push_back(std::make_unique<Translator>(std::vector<std::string>{o.model},
                                                       TranslatorOptions{.compute_type = c}));
    for (int beam : {1, o.beam})
      for (int64_t batch : {int64_t{1}, o.batch})
        cells.push_back(
            {.translator = translators.back().get(), .compute = c, .beam = beam, .batch = batch});
  }
  auto options_of = [](const Cell& cell) {
    TranslationOptions t;
    t.beam_size = cell.beam;
    t.max_batch_size = cell.batch;
    t.return_scores = false;  // as heed translate's lines: the outputs alone
    return t;
  };
  for (const Cell& cell : cells) cell.translator->translate(warmup, options_of(cell));

  for (int round = 0; round < o.rounds; ++round)
    for (Cell& cell : cells) {
      const auto t0 = bench::Clock::now();
      const Translator& t = *cell.translator;
      const std::vector<TranslationResult> results = t.translate(sentences, options_of(cell));
      cell.seconds.push_back(bench::since(t0));
      int64_t tokens = 0;
      const Fnv1a h = outputs_hash(t, results, tokens);
      check(round == 0 || h.value() == cell.outputs.value(), "bench decode: the ",
            name_of(cell.compute), " cell with beam ", cell.beam, " and batch ", cell.batch,
            " translated differently in round ", round + 1, " than in round 1");
      cell.outputs = h;
      cell.tokens = tokens;
    }

  const auto n = static_cast<double>(sentences.size());
  auto median_rate = [&](const Cell& cell) { return n / bench::median(cell.seconds); };
  for (const Cell& cell : cells) {
    const double best = n / *std::min_element(cell.seconds.begin(), cell.seconds.end());
    nlohmann::json j = {
        {"bench", "decode"},
        {"model", o.model},
        {"src", o.src},
        {"sentences", sentences.size()},
        {"decoding", cell.beam == 1 ? "greedy" : "beam"},
        {"beam", cell.beam},
        {"batch", cell.batch},
        {"compute", name_of(cell.compute)},
        {"rounds", o.rounds},
        {"sent_per_s", bench::round_to(median_rate(cell), 1)},
        {"sent_per_s_best", bench::round_to(best, 1)},
        {"tgt_tokens_per_s",
         bench::round_to(static_cast<double>(cell.tokens) / bench::median(cell.seconds), 1)},
        {"tgt_tokens", cell.tokens},
        {"outputs_fnv1a", cell.outputs.hex()}};
    if (cell.batch > 1)  // against the same decoding one sentence at a time (issue 70: >= 1.5x)
      for (const Cell& single : cells)
        if (single.batch == 1 && single.beam == cell.beam && single.compute == cell.compute) {
          j["batch_gain"] = bench::round_to(median_rate(cell) / median_rate(single), 3);
          j["same_outputs_as_batch_1"] = single.outputs.value() == cell.outputs.value();
        }
    bench::write_line(out, j);
  }
}

}  // namespace heed
