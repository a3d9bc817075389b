// `heed score`: BLEU, chrF, and G2P word/phone error rates of a hypothesis file against
// reference files. The score comes first on the line, as sacreBLEU prints it; --json for machines.
// Leaves out: the metrics themselves (metrics/).
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <tuple>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "heed/data/corpus.h"
#include "heed/data/labeled.h"
#include "heed/data/speech_corpus.h"
#include "heed/data/text.h"
#include "heed/data/transcript.h"
#include "heed/metrics/latency.h"
#include "heed/metrics/metrics.h"
#include "heed/metrics/word_delay.h"
#include "heed/util/error.h"

namespace heed::cli {
namespace {

std::vector<std::string> lines_of(const std::string& path) {
  return path == "-" ? read_lines(std::cin, "<stdin>") : read_lines(path);
}

// Classification files: the label is the first field of each line ("<label> <sentence>" as
// SST publishes it, or `heed classify` output).
std::vector<int32_t> labels_of(const std::string& path) {
  std::vector<int32_t> out;
  const std::vector<std::string> lines = lines_of(path);
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::vector<std::string> f = split_words(lines[i]);
    const int32_t y = f.empty() ? -1 : parse_label(f.front());
    check(y >= 0, path, ":", i + 1, ": the line does not start with a label (an integer >= 0)");
    out.push_back(y);
  }
  return out;
}

// G2P files: CMUdict format ("WORD  PH PH"), several lines of a word = its alternatives.
std::map<std::string, std::vector<std::string>> g2p_file(const std::string& path) {
  return group_alternatives(read_cmudict(path));
}

// A corpus score of the lines `keep` (all when empty): its human line and its JSON.
using SubsetScore =
    std::function<std::pair<std::string, nlohmann::json>(const std::vector<size_t>& keep)>;

// The score of each length bucket of `texts` in words (upper edges `edges`; a line of n words
// falls in the first bucket whose edge is >= n), appended to `line` (one indented line each,
// "<what> 1-10 (N lines): ...") and to out[key] (one object each, with "<unit>": "1-10" and
// "lines").
void score_buckets(const std::vector<std::string>& texts, const std::vector<int>& edges,
                   const std::string& what, const std::string& key, const std::string& unit,
                   const SubsetScore& score, std::string& line, nlohmann::json& out) {
  check(!edges.empty() && std::is_sorted(edges.begin(), edges.end()) && edges.front() > 0,
        "--buckets: positive, increasing upper edges, e.g. 10,20,30");
  std::vector<std::vector<size_t>> lines_in(edges.size() + 1);
  for (size_t i = 0; i < texts.size(); ++i) {
    const auto n = static_cast<int>(split_words(texts[i]).size());
    lines_in[std::lower_bound(edges.begin(), edges.end(), n) - edges.begin()].push_back(i);
  }
  out[key] = nlohmann::json::array();
  for (size_t b = 0; b < lines_in.size(); ++b) {
    if (lines_in[b].empty()) continue;
    const int lo = b == 0 ? 1 : edges[b - 1] + 1;
    const std::string range = b < edges.size() ? std::to_string(lo) + "-" + std::to_string(edges[b])
                                               : std::to_string(lo) + "+";
    auto [bl, bj] = score(lines_in[b]);
    line += "\n  ";
    line += what;
    line += " " + range;
    line += " (" + std::to_string(lines_in[b].size()) + " lines): ";
    line += bl;
    bj[unit] = range;
    bj["lines"] = lines_in[b].size();
    out[key].push_back(bj);
  }
}

template <class T>
std::vector<T> pick(const std::vector<T>& v, const std::vector<size_t>& keep) {
  if (keep.empty()) return v;
  std::vector<T> sub;
  sub.reserve(keep.size());
  for (size_t i : keep) sub.push_back(v[i]);
  return sub;
}

}  // namespace

std::span<const Named<Metric>> names(Metric) {
  static constexpr Named<Metric> kNames[] = {{Metric::Bleu, "bleu"},      {Metric::Chrf, "chrf"},
                                             {Metric::Wer, "wer"},        {Metric::Cer, "cer"},
                                             {Metric::Per, "per"},        {Metric::Acc, "acc"},
                                             {Metric::Latency, "latency"}};
  return kNames;
}

void ScoreCommand::add(CLI::App& parent) {
  app = parent.add_subcommand("score", "Score a hypothesis file against references");
  add_enum_option(
      *app, "--metric", metric,
      "bleu: corpus BLEU-4 as sacreBLEU computes it (see --tokenize, --multi-bleu); "
      "chrf: chrF2 (character 6-grams; chrF++ with --chrf-word-order 2); wer/cer: word and "
      "character error rates of transcripts, corpus-level (edits / reference words or "
      "characters, spaces counted; --ref may be a speech manifest or Kaldi data "
      "directory, whose transcripts are the references; see --normalise); wer/per "
      "with a CMUdict --ref: G2P word and phone error rates (a word's lines are its "
      "alternative pronunciations); acc: classification accuracy and confusion matrix "
      "(the first field of each line is its label, so an SST file and `heed "
      "classify` output compare directly); latency: AL, AP and DAL of online decoding "
      "(--hyp is `heed translate --online --latency-out`'s JSON lines; with --ref, "
      "the reference translations, also LAAL; or `heed transcribe --online`'s JSON "
      "lines with --ref the corpus's word timings, *.align.jsonl: each recognised word's "
      "delay from its end in the audio to its emission, mean, p50 and p90, and AL in "
      "ms)");
  app->add_option("--ref", refs,
                  "Reference file (repeat for several references; required but for latency)");
  app->add_option("--hyp", hyp, "Hypothesis file, line-parallel to the references (- = stdin)")
      ->required();
  add_enum_option(*app, "--tokenize", tokenize,
                  "BLEU on detokenised text, as sacreBLEU: its tokeniser, 13a (its default: "
                  "mteval-v13a's), intl (mteval-v14's Unicode punctuation and symbols), char "
                  "(every character a token) or none (split at whitespace only). The score, its "
                  "precisions and its signature equal sacreBLEU 2's, the signature's version "
                  "being heed's");
  app->add_flag("--multi-bleu", multi_bleu,
                "BLEU on tokenised text as given, as multi-bleu.perl: no smoothing, no signature "
                "(the convention of scores on tokenised Multi30k and of heed's dev BLEU)");
  app->add_flag("--lowercase,-l", lowercase, "BLEU and chrF: lowercase both sides first");
  app->add_option("--chrf-word-order", chrf.word_order,
                  "chrF: word n-gram order (0: chrF; 2: chrF++, Popović 2017)")
      ->capture_default_str();
  app->add_option("--chrf-char-order", chrf.char_order, "chrF: character n-gram order")
      ->capture_default_str();
  app->add_option("--chrf-beta", chrf.beta, "chrF: recall weighs beta times precision")
      ->capture_default_str();
  app->add_flag("--chrf-whitespace", chrf.whitespace,
                "chrF: keep whitespace in the character n-grams");
  app->add_flag("--chrf-eps-smoothing", chrf.eps_smoothing,
                "chrF: chrF++.py's smoothing (every order counts, an absent one as 1e-16) "
                "instead of sacreBLEU's average over the orders both sides have");
  app->add_option("--width,-w", width, "BLEU and chrF: decimals of the score (sacreBLEU's is 1)")
      ->check(CLI::Range(0, 10))
      ->capture_default_str();
  app->add_flag("--normalise", normalise,
                "wer/cer of transcripts: normalise both sides first as heed's recognizers are "
                "trained (lower case; accented Latin-1 letters to their base; curly quotes to "
                "the apostrophe; every other character but a-z and the apostrophe a space; "
                "spaces collapsed). Without it the lines are compared as given (words split at "
                "whitespace)");
  app->add_flag("--json", json, "Print one JSON object instead of the human-readable line");
  app->add_option("--by-src-length", by_src_length,
                  "Source file (line-parallel): also score each source-length bucket, to see how "
                  "quality falls with sentence length (Cho et al. 2014; Bahdanau et al. 2015)");
  app->add_flag("--by-ref-length", by_ref_length,
                "wer/cer of transcripts: also score each bucket of reference length (words), to "
                "see how recognizers fare on long utterances (Chorowski et al. 2015; Chan et al. "
                "2016)");
  app->add_option("--buckets", buckets,
                  "Upper edges in words of the length buckets (of the source, or the reference)")
      ->delimiter(',')
      ->capture_default_str();
}

int ScoreCommand::run() const {
  nlohmann::json out;
  std::string line;
  check(metric == Metric::Latency || !refs.empty(), "score: --ref is required for ",
        name_of(metric));
  const auto given = [&](const char* name) { return app->get_option(name)->count() > 0; };
  check(!(multi_bleu && given("--tokenize")),
        "score: --multi-bleu scores the text as given; it takes no --tokenize");
  check(metric == Metric::Bleu || !(multi_bleu || given("--tokenize")),
        "score: --tokenize and --multi-bleu are for --metric bleu");
  for (const char* o : {"--chrf-word-order", "--chrf-char-order", "--chrf-beta",
                        "--chrf-whitespace", "--chrf-eps-smoothing"})
    check(metric == Metric::Chrf || !given(o), "score: ", o, " is for --metric chrf");
  check(!by_ref_length || metric == Metric::Wer || metric == Metric::Cer,
        "score: --by-ref-length is for --metric wer|cer of transcripts");
  if (metric == Metric::Latency && hyp != "-" && is_stream_output(hyp)) {
    // streaming recognition: word delays against the corpus's word timings
    check(refs.size() == 1,
          "score: latency of heed transcribe --online's output takes one "
          "--ref, the corpus's word timings (*.align.jsonl)");
    const WordDelayScore s = word_delays(read_word_timings(refs.front()), read_stream_words(hyp));
    line = s.str();
    out = {{"metric", "latency"},      {"word_delay_mean", s.mean},  {"word_delay_p50", s.p50},
           {"word_delay_p90", s.p90},  {"recognised", s.recognised}, {"al_ms", s.al_ms},
           {"ref_words", s.ref_words}, {"utterances", s.utterances}};
  } else if (metric == Metric::Latency) {
    check(refs.size() <= 1, "latency takes at most one reference file (for LAAL)");
    const std::vector<Delays> d = hyp == "-" ? read_delays(std::cin, "<stdin>") : read_delays(hyp);
    std::vector<int64_t> ref_lens;
    if (!refs.empty()) {
      const std::vector<std::string> r = lines_of(refs.front());
      check(r.size() == d.size(), "score: ", hyp, " has ", d.size(), " lines but ", refs.front(),
            " has ", r.size());
      for (const std::string& l : r)
        ref_lens.push_back(static_cast<int64_t>(split_words(l).size()));
    }
    const LatencyScore s = corpus_latency(d, ref_lens);
    line = s.str();
    out = {{"metric", "latency"},      {"al", s.al},      {"ap", s.ap}, {"dal", s.dal},
           {"sentences", s.sentences}, {"empty", s.empty}};
    if (s.laal) out["laal"] = *s.laal;
  } else if (metric == Metric::Acc) {
    check(refs.size() == 1, "acc takes one reference file");
    std::vector<int32_t> h = labels_of(hyp), r = labels_of(refs.front());
    check(h.size() == r.size(), "score: ", hyp, " has ", h.size(), " lines but ", refs.front(),
          " has ", r.size());
    AccuracyScore s = accuracy(r, h);
    line = s.str();
    out = {{"metric", "acc"}, {"score", s.accuracy}, {"n", s.n}, {"confusion", s.confusion}};
  } else if (metric == Metric::Cer || (metric == Metric::Wer && !refs.empty() &&
                                       (std::filesystem::is_directory(refs.front()) ||
                                        detect_format(refs.front()) != CorpusFormat::Cmudict))) {
    check(refs.size() == 1, name_of(metric), " takes one reference file");
    std::vector<std::string> r;
    if (std::filesystem::is_directory(refs.front()) ||
        detect_format(refs.front()) == CorpusFormat::Audio) {
      for (const Utterance& u : read_speech_corpus(refs.front()).utterances) r.push_back(u.text);
    } else {
      r = lines_of(refs.front());
    }
    std::vector<std::string> h = lines_of(hyp);
    check(h.size() == r.size(), "score: ", hyp, " has ", h.size(), " lines but ", refs.front(),
          " has ", r.size(), " transcripts");
    if (normalise) {
      for (auto& x : h) x = normalise_transcript(x);
      for (auto& x : r) x = normalise_transcript(x);
    }
    const bool words = metric == Metric::Wer;
    const SubsetScore score = [&](const std::vector<size_t>& keep) {
      const ErrorRate e = words ? word_error_rate(pick(h, keep), pick(r, keep))
                                : char_error_rate(pick(h, keep), pick(r, keep));
      return std::make_pair(e.str(words ? "WER" : "CER"),
                            nlohmann::json{{"metric", words ? "wer" : "cer"},
                                           {"score", e.percent()},
                                           {"edits", e.edits},
                                           {"length", e.length},
                                           {"normalised", normalise}});
    };
    std::tie(line, out) = score({});
    line += normalise ? "  (normalised: lower case a-z, apostrophe, space)" : "  (as given)";
    if (by_ref_length) {
      score_buckets(r, buckets, "reference words", "by_ref_length", "ref_words", score, line, out);
    }
  } else if (metric == Metric::Wer || metric == Metric::Per) {
    check(refs.size() == 1, "wer/per take one reference file (alternatives are its lines)");
    check(!by_ref_length, "score: --by-ref-length is for transcripts, not a CMUdict reference");
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
    const SubsetScore score =
        [&](const std::vector<size_t>& keep) -> std::pair<std::string, nlohmann::json> {
      std::vector<std::vector<std::string>> rr;
      rr.reserve(r.size());
      for (const auto& ref : r) rr.push_back(pick(ref, keep));
      if (metric == Metric::Bleu) {
        BleuScore s =
            corpus_bleu(pick(h, keep), rr,
                        {.sacrebleu = !multi_bleu, .tokenize = tokenize, .lowercase = lowercase});
        nlohmann::json j = {{"name", "BLEU"},
                            {"metric", "bleu"},
                            {"score", s.score},
                            {"verbose_score", s.verbose()},
                            {"precisions", s.precisions},
                            {"bp", s.bp},
                            {"ratio", s.ratio},
                            {"hyp_len", s.hyp_len},
                            {"ref_len", s.ref_len}};
        if (!s.signature.empty()) j["signature"] = s.signature;
        return {s.str(width), j};
      }
      ChrfOptions co = chrf;
      co.lowercase = lowercase;
      ChrfScore s = corpus_chrf(pick(h, keep), rr, co);
      return {
          s.str(width),
          {{"name", s.name}, {"metric", "chrf"}, {"score", s.score}, {"signature", s.signature}}};
    };
    std::tie(line, out) = score({});
    if (!by_src_length.empty()) {
      std::vector<std::string> src = lines_of(by_src_length);
      check(src.size() == h.size(), "score: ", hyp, " has ", h.size(), " lines but ", by_src_length,
            " has ", src.size());
      score_buckets(src, buckets, "source words", "by_src_length", "src_words", score, line, out);
    }
  }
  std::cout << (json ? out.dump() : line) << "\n";
  return 0;
}

}  // namespace heed::cli
