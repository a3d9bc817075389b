// `heed translate`: stdin -> stdout, one output line per input line, optionally with the
// attention weights as JSON lines. For a G2P model, input lines may be words or CMUdict
// entries ("WORD  PH ..."), and output lines are CMUdict entries, ready for `heed score`.
// Decoding is the inference API's (decode/translator.h); this file parses the flags and prints:
// one line per input line (Moses/Marian n-best lines with --n-best), --attention-out JSON, and
// with --score-target F the log-probability of each line of F given its input line instead.
// On a terminal, stderr shows progress.
// Several --model directories decode as one ensemble (models/ensemble.h). With --n-best N, each
// input line gives N output lines in the Moses/Marian n-best format (see --help).
// Leaves out: the models, search and text handling (models/, decode/).
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <optional>

#include "commands.h"
#include "heed/data/text.h"
#include "heed/decode/limits.h"
#include "heed/decode/translator.h"
#include "heed/models/model_files.h"
#include "heed/util/clock.h"
#include "heed/util/error.h"

namespace heed::cli {
namespace {
// {"src", "out", "attention"}: the EOS row, unless the output was cut at the length limit
// before its EOS, is named "</s>"; a CTC model's last row is the blank's, and "path" gives per
// input position the row of the most probable alignment
std::string attention_json(const std::vector<std::string>& src, std::vector<std::string> out,
                           const std::vector<std::vector<float>>& attention, bool ctc,
                           const std::vector<int32_t>& path) {
  if (attention.size() > out.size()) out.emplace_back(ctc ? "<blank>" : "</s>");
  nlohmann::json j{{"src", src}, {"out", out}, {"attention", attention}};
  if (!path.empty()) j["path"] = path;
  return j.dump() + "\n";
}

// Progress on stderr when it is a terminal: sentences, speed, ETA.
class ProgressLine {
 public:
  explicit ProgressLine(size_t total) : total_(total), on_(isatty(STDERR_FILENO) != 0) {}
  ~ProgressLine() {
    if (on_ && printed_) std::fprintf(stderr, "\n");
  }
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;
  void operator()(size_t done, size_t tokens) {
    const auto now = std::chrono::steady_clock::now();
    if (!on_ || (std::chrono::duration<double>(now - last_).count() <= 1 && done < total_)) return;
    last_ = now;
    printed_ = true;
    const double secs = std::chrono::duration<double>(now - t0_).count();
    std::fprintf(
        stderr, "\rtranslate: %zu/%zu sentences  %.1f sent/s  %.0f tok/s  ETA %s ", done, total_,
        static_cast<double>(done) / secs, static_cast<double>(tokens) / secs,
        clock_text(secs / static_cast<double>(done) * static_cast<double>(total_ - done)).c_str());
  }

 private:
  size_t total_;
  bool on_, printed_ = false;
  std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now(), last_ = t0_;
};
}  // namespace

void TranslateCommand::add(CLI::App& parent, int& threads) {
  app = parent.add_subcommand("translate", "Translate stdin to stdout with a trained model");
  app->add_option("--model", model_dirs,
                  "Model directory (from heed train); several (--model A B, or --model repeated): "
                  "an ensemble averaging their next-token probabilities, whose vocabularies must "
                  "be the same")
      ->required();
  auto& o = options;
  app->add_option("--beam", o.beam_size, "Beam size (1: greedy)")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, limits::kMaxBeam));
  app->add_option("--length-penalty", o.length_penalty,
                  "Beam: rank finished outputs by log p / length^alpha (0: raw log p)")
      ->capture_default_str()
      ->check(kNonNegative);
  app->add_option("--max-len-ratio", o.max_len_ratio, "Output length limit: ratio x source + 10")
      ->capture_default_str()
      ->check(kPositive)
      ->check(CLI::Range(0.0, limits::kMaxLenRatio));
  app->add_option("--max-length", o.max_decoding_length,
                  "Output length limit in units, on top of the ratio (0: the ratio only)")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{0}, limits::kMaxLength));
  app->add_option("--n-best", o.num_hypotheses,
                  "Write the N best outputs of each input line (N <= --beam), best first, as "
                  "Moses/Marian n-best lines: `ID ||| output ||| F0= log p ||| score`, with ID the "
                  "0-based input line and score the length-normalised log p that ranks them "
                  "(ctc: log p); "
                  "--attention-out then has one line per output line")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, limits::kMaxBeam));
  app->add_option("--batch", o.max_batch_size, "Sentences decoded together")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, limits::kMaxBatch));
  app->add_option("--max-input-length", o.max_input_length,
                  "Source units read of a line: longer lines are cut there, with a warning naming "
                  "the line (time and memory stay bounded); with --score-target a longer source "
                  "or target is an error; 0: no limit")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app->add_option("--attention-out", attention_out,
                  "Write {\"src\", \"out\", \"attention\"} JSON per output line to this file "
                  "(one row of weights over the source per output token, the EOS row last; ctc: "
                  "each output unit's alignment posterior over the source, the blank's last, and "
                  "\"path\": per input position the row of the most probable alignment)");
  app->add_option("--attention-layer", o.attention_layer,
                  "transformer and conv: the decoder layer whose attention --attention-out (and "
                  "--replace-unk) reads, "
                  "0-based (-1: the last)")
      ->capture_default_str();
  app->add_option("--attention-head", o.attention_head,
                  "transformer: one head of that layer, 0-based (-1: the mean over heads)")
      ->capture_default_str();
  app->add_flag("--attention-distribution", o.attention_distribution,
                "rnn, --attention hard: --attention-out writes alpha_i, the distribution each "
                "position was chosen from, instead of the one-hot row of the chosen position");
  add_enum_option(*app, "--compute-type", translator.compute_type,
                  "Weights for decoding: int8 quantizes the weight matrices per row at load time "
                  "(faster, especially at small batches; slightly different scores)");
  app->add_flag("--replace-unk", o.replace_unknowns,
                "Replace each <unk> in the output by the source word it attends to most "
                "(Jean et al. 2015; word-level targets)");
  app->add_option("--score-target", score_target,
                  "Score instead of translating: print the log-probability the model gives each "
                  "line of this file (line-parallel to stdin), as marian-scorer; "
                  "--attention-out then writes the forced alignment")
      ->check(CLI::ExistingFile);
  app->add_flag("--word-scores", word_scores,
                "With --score-target: after each total, a tab and the log-probability of every "
                "output unit, the EOS last");
  app->add_option("--lm", translator.lm,
                  "ctc: an ARPA n-gram model of the output units (heed lm, or KenLM's lmplz) "
                  "joined to the prefix search (--beam >= 2): outputs ranked by log p_ctc + "
                  "--lm-weight x ln p_lm + --lm-bonus x length")
      ->check(CLI::ExistingFile);
  app->add_option("--lm-weight", o.lm_weight, "ctc with --lm: the LM's weight")
      ->capture_default_str()
      ->check(kNonNegative);
  app->add_option("--lm-bonus", o.lm_bonus,
                  "ctc with --lm: added per output unit (offsets the LM's taste for short output)")
      ->capture_default_str();
  app->add_flag("--flush", flush,
                "Answer each input line as soon as it is read, flushed, one sentence at a time "
                "(any --beam), as Marian's --mini-batch 1 and fairseq-interactive do: for a person "
                "typing or a pipe held open; on when stdin is a terminal. Without it, lines are "
                "read to the end and decoded in batches of similar length");
  app->add_flag("--online", online,
                "Simultaneous decoding, greedy: read each line's source units one at a time and "
                "write each output unit as soon as the model's policy lets it, flushed (so it "
                "streams through a pipe): wait-k models after i + k units (--wait-k), monotonic "
                "and mocha models when their attention stops on a unit read; needs a "
                "unidirectional encoder, and other models read the whole line first (said on "
                "stderr). Writes what offline greedy decoding writes");
  app->add_option("--wait-k", translator.load.wait_k,
                  "wait-k models (trained with --wait-k): decode at this k instead of the "
                  "model's own, offline and --online (a model trained with --wait-k-sample "
                  "serves any k; one trained at a single k is best at that k); 0: the model's")
      ->capture_default_str()
      ->check(CLI::Range(0, 1 << 20));
  app->add_flag("--hard-marginal", translator.load.hard_marginal,
                "rnn models with hard attention trained with --hard-train exact: score each "
                "output with the marginal it was trained on, p(y_i) = sum_j alpha_ij "
                "p(y_i | h_j) (Wu et al. 2018), instead of the argmax position's p(y_i | h_j) "
                "alone; the attention reported is alpha_i");
  app->add_option("--latency-out", latency_out,
                  "With --online: write {\"src_len\", \"out\", \"delays\"} JSON per line to "
                  "this file, one delay per output unit (the source units read when it was "
                  "written, EOS excluded), for heed score --metric latency");
  app->add_option("--threads", threads, "Threads (0 = all cores)");
}

int TranslateCommand::run() const {
  TranslationOptions o = options;
  check(o.beam_size >= 1, "--beam must be >= 1, got ", o.beam_size);
  check(o.max_batch_size >= 1, "--batch must be >= 1, got ", o.max_batch_size);
  check(o.num_hypotheses >= 1 && o.num_hypotheses <= o.beam_size, "--n-best must be in 1..--beam (",
        o.beam_size, "), got ", o.num_hypotheses);
  check(!word_scores || !score_target.empty(), "--word-scores goes with --score-target");
  check(latency_out.empty() || online, "--latency-out goes with --online");
  warn_if_int8_inexact("heed translate", translator.compute_type);
  o.return_scores = nbest_lines_have_scores(o.num_hypotheses);  // (--score-target: its own)
  const Translator translator_(model_dirs, translator);
  if (online) return run_online(translator_, o);
  if (flush || isatty(STDIN_FILENO) != 0) {
    check(score_target.empty(),
          "--flush (or a terminal on stdin) and --score-target do not go "
          "together: scoring reads the whole input");
    return run_interactive(translator_, o);
  }
  const std::vector<std::string> lines = read_lines(std::cin, "<stdin>");
  std::optional<AtomicFile> attn;  // put in place whole once every line is written
  if (!attention_out.empty()) attn.emplace(attention_out);
  o.return_attention = attn.has_value();
  if (!score_target.empty()) return score(translator_, lines, o, attn ? &*attn : nullptr);
  ProgressLine progress(lines.size());
  const bool ctc = translator_.model().frame_labeller() != nullptr;
  translator_.translate_each(
      lines, o,
      [&](size_t i, TranslationResult&& r) {
        if (r.truncated)
          std::cerr << "heed translate: warning: <stdin>:" << i + 1 << ": longer than "
                    << o.max_input_length
                    << " units; translated up to there (--max-input-length)\n";
        for (const TranslationHypothesis& h : r.hypotheses) {
          std::cout << translator_.nbest_line(i, r, h, o.num_hypotheses) << '\n';
          if (attn) attn->write(attention_json(r.source, h.tokens, h.attention, ctc, h.path));
        }
        if (i + 1 == lines.size() || (i + 1) % (50 * static_cast<size_t>(o.max_batch_size)) == 0)
          check_stdout();  // a window at a time; a failed write stops the run
      },
      [&](size_t done, size_t tokens) { progress(done, tokens); });
  check_stdout();
  if (attn) attn->commit();
  return 0;
}

// --flush, or a terminal: read a line, decode it alone, write its output(s) flushed, and so on;
// the outputs are those of the batched run (one sentence at a time decodes the same).
int TranslateCommand::run_interactive(const Translator& t, const TranslationOptions& o) const {
  std::optional<AtomicFile> attn;  // put in place whole at the end of the input
  if (!attention_out.empty()) attn.emplace(attention_out);
  TranslationOptions one = o;
  one.return_attention = attn.has_value();
  const bool ctc = t.model().frame_labeller() != nullptr;
  std::string raw;
  for (size_t n = 1; std::getline(std::cin, raw); ++n) {
    const std::vector<std::string> line = {checked_line(raw, "<stdin>", n)};
    t.translate_each(line, one, [&](size_t, TranslationResult&& r) {
      if (r.truncated)
        std::cerr << "heed translate: warning: <stdin>:" << n << ": longer than "
                  << o.max_input_length << " units; translated up to there (--max-input-length)\n";
      for (const TranslationHypothesis& h : r.hypotheses) {
        std::cout << t.nbest_line(n - 1, r, h, o.num_hypotheses) << '\n';
        if (attn) attn->write(attention_json(r.source, h.tokens, h.attention, ctc, h.path));
      }
    });
    std::cout << std::flush;
    check_stdout();
  }
  check(!std::cin.bad(), "<stdin>: read error");
  if (attn) attn->commit();
  return 0;
}

int TranslateCommand::run_online(const Translator& t, const TranslationOptions& o) const {
  check(o.beam_size == 1 && o.num_hypotheses == 1,
        "--online decodes greedily: --beam and --n-best must be 1");
  check(score_target.empty(), "--online and --score-target do not go together");
  check(t.model().frame_labeller() == nullptr,
        "--online: a ctc model has no online policy (its encoder reads the whole source)");
  const OnlinePolicy policy = t.model().online_policy();
  if (policy.kind == OnlinePolicy::Kind::ReadAll)
    std::cerr << "heed translate --online: this model needs the whole source (" << policy.reason
              << "): it reads each line whole, then writes\n";
  std::optional<AtomicFile> attn, latency;
  if (!attention_out.empty()) attn.emplace(attention_out);
  if (!latency_out.empty()) latency.emplace(latency_out);
  TranslationOptions oo = o;
  oo.return_attention = attn.has_value();
  std::string raw;
  for (size_t n = 1; std::getline(std::cin, raw); ++n) {
    const std::string line = checked_line(raw, "<stdin>", n);  // as read_lines checks each
    // the line's output grows as units are written; what is printed is the new end of it
    TranslationResult partial;
    partial.input = model_input(t.text_format(), line);  // G2P: the word
    TranslationHypothesis so_far;
    std::string printed;
    auto show = [&](const std::string& text) {
      if (text.size() > printed.size() && text.compare(0, printed.size(), printed) == 0) {
        std::cout << text.substr(printed.size()) << std::flush;
        printed = text;
      }
    };
    Translator::OnlineTranslation r =
        t.translate_online(line, oo, [&](const std::string& unit, int64_t) {
          so_far.tokens.push_back(unit);
          so_far.text = t.text_format().tgt_seg.join(so_far.tokens);
          show(t.output_line(partial, so_far));
        });
    const TranslationHypothesis& h = r.result.hypotheses.front();
    const std::string final_line = t.output_line(r.result, h);
    check(final_line.compare(0, printed.size(), printed) == 0, "<stdin>:", n,
          ": the output written so far is not a prefix of the line's output");
    std::cout << final_line.substr(printed.size()) << '\n' << std::flush;
    check_stdout();
    if (r.result.truncated)
      std::cerr << "heed translate: warning: <stdin>:" << n << ": longer than "
                << o.max_input_length << " units; translated up to there (--max-input-length)\n";
    if (attn) attn->write(attention_json(r.result.source, h.tokens, h.attention, false, {}));
    if (latency) {
      const nlohmann::json j = {
          {"src_len", r.result.source.size()}, {"out", h.tokens}, {"delays", r.delays}};
      latency->write(j.dump() + "\n");
    }
  }
  check(!std::cin.bad(), "<stdin>: read error");
  if (attn) attn->commit();
  if (latency) latency->commit();
  return 0;
}

int TranslateCommand::score(const Translator& t, const std::vector<std::string>& lines,
                            const TranslationOptions& o, AtomicFile* attn) const {
  const std::vector<std::string> targets = read_lines(score_target);
  check(targets.size() == lines.size(), score_target, " has ", targets.size(),
        " lines but <stdin> has ", lines.size());
  for (const ScoringResult& r : t.score(lines, targets, o)) {
    std::cout << score_text(r.log_prob);
    if (word_scores) {
      std::cout << '\t';
      for (size_t k = 0; k < r.token_log_probs.size(); ++k)
        std::cout << (k ? " " : "") << score_text(r.token_log_probs[k]);
    }
    std::cout << '\n';
    if (attn)
      attn->write(attention_json(r.source, r.tokens, r.attention,
                                 t.model().frame_labeller() != nullptr, r.path));
  }
  check_stdout();
  if (attn) attn->commit();
  return 0;
}

}  // namespace heed::cli
