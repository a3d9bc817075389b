// `heed score`: BLEU, chrF, and G2P word/phone error rates of a hypothesis file against
// reference files. The score comes first on the line, as sacreBLEU prints it; --json for machines.
// Leaves out: the metrics themselves (metrics/).
#include <iostream>
#include <map>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "heed/data/corpus.h"
#include "heed/data/text.h"
#include "heed/metrics/metrics.h"
#include "heed/util/error.h"

namespace heed::cli {
namespace {

std::vector<std::string> lines_of(const std::string& path) {
  if (path != "-") return read_lines(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(std::cin, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    check(is_valid_utf8(line), "<stdin>:", lines.size() + 1, ": invalid UTF-8");
    lines.push_back(line);
  }
  return lines;
}

// G2P files: CMUdict format ("WORD  PH PH"), several lines of a word = its alternatives.
std::map<std::string, std::vector<std::string>> g2p_file(const std::string& path) {
  return group_alternatives(read_cmudict(path));
}

}  // namespace

void ScoreCommand::add(CLI::App& parent) {
  app = parent.add_subcommand("score", "Score a hypothesis file against references");
  const std::map<std::string, Metric> metrics = {
      {"bleu", Metric::Bleu}, {"chrf", Metric::Chrf}, {"wer", Metric::Wer}, {"per", Metric::Per}};
  app->add_option("--metric", metric,
                  "bleu: corpus BLEU-4; chrf: chrF2 (character 6-grams); wer/per: G2P word and "
                  "phone error rates (--ref/--hyp in CMUdict format, a word's lines are its "
                  "alternative pronunciations)")
      ->transform(CLI::CheckedTransformer(metrics, CLI::ignore_case))
      ->capture_default_str();
  app->add_option("--ref", refs, "Reference file (repeat for several references)")->required();
  app->add_option("--hyp", hyp, "Hypothesis file, line-parallel to the references (- = stdin)")
      ->required();
  app->add_option("--tokenize", tokenize,
                  "BLEU tokenisation: none (tokenised text, as multi-bleu.perl) or 13a "
                  "(sacreBLEU's, on detokenised text; adds its signature)")
      ->check(CLI::IsMember({"none", "13a"}))
      ->capture_default_str();
  app->add_flag("--lowercase", lowercase, "BLEU: lowercase both sides first");
  app->add_flag("--json", json, "Print one JSON object instead of the human-readable line");
}

int ScoreCommand::run() const {
  nlohmann::json out;
  std::string line;
  if (metric == Metric::Wer || metric == Metric::Per) {
    check(refs.size() == 1, "wer/per take one reference file (alternatives are its lines)");
    std::map<std::string, std::string> hyps;
    for (auto& [word, prons] : g2p_file(hyp)) hyps[word] = prons.front();
    G2pScore s = g2p_error_rates(hyps, g2p_file(refs.front()));
    line = s.str();
    out = {{"metric", "g2p"},
           {"wer", s.wer},
           {"per", s.per},
           {"words", s.words},
           {"phones", s.phones}};
  } else {
    std::vector<std::string> h = lines_of(hyp);
    std::vector<std::vector<std::string>> r;
    for (const auto& f : refs) {
      r.push_back(lines_of(f));
      check(r.back().size() == h.size(), "score: ", hyp, " has ", h.size(), " lines but ", f,
            " has ", r.back().size());
    }
    if (metric == Metric::Bleu) {
      BleuScore s = corpus_bleu(h, r, {.tokenize_13a = tokenize == "13a", .lowercase = lowercase});
      line = s.str();
      out = {{"metric", "bleu"},     {"score", s.score},        {"precisions", s.precisions},
             {"bp", s.bp},           {"ratio", s.ratio},        {"hyp_len", s.hyp_len},
             {"ref_len", s.ref_len}, {"signature", s.signature}};
    } else {
      ChrfScore s = corpus_chrf(h, r);
      line = s.str();
      out = {{"metric", "chrf"}, {"score", s.score}};
    }
  }
  std::cout << (json ? out.dump() : line) << "\n";
  return 0;
}

}  // namespace heed::cli
