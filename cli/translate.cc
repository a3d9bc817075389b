// `heed translate`: stdin -> stdout, one output line per input line, optionally with the
// attention weights as JSON lines. For a G2P model, input lines may be words or CMUdict
// entries ("WORD  PH ..."), and output lines are CMUdict entries, ready for `heed score`.
// Sentences are decoded in batches of similar source length (sorted within windows of 50
// batches, as Marian's maxi-batches: less padding, and a batch's rows finish together) and
// written back in input order window by window. On a terminal, stderr shows progress.
// Several --model directories decode as one ensemble (models/ensemble.h). With --n-best N, each
// input line gives N output lines in the Moses/Marian n-best format (see --help).
// Leaves out: the models and search (models/, decode/).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <numeric>

#include "commands.h"
#include "heed/data/text.h"
#include "heed/decode/beam_search.h"
#include "heed/decode/replace_unk.h"
#include "heed/models/ensemble.h"
#include "heed/util/clock.h"
#include "heed/util/error.h"

namespace heed::cli {
namespace {
std::string score_text(double x) {  // an n-best score, as Marian prints them
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.5f", x);
  return buf;
}
}  // namespace

void TranslateCommand::add(CLI::App& parent, int& threads) {
  app = parent.add_subcommand("translate", "Translate stdin to stdout with a trained model");
  app->add_option("--model", model_dirs,
                  "Model directory (from heed train); several (--model A B, or --model repeated): "
                  "an ensemble averaging their next-token probabilities, whose vocabularies must "
                  "be the same")
      ->required();
  app->add_option("--beam", beam, "Beam size (1: greedy)")->capture_default_str();
  app->add_option("--length-penalty", length_penalty,
                  "Beam: rank finished outputs by log p / length^alpha (0: raw log p)")
      ->capture_default_str();
  app->add_option("--max-len-ratio", max_len_ratio, "Output length limit: ratio x source + 10")
      ->capture_default_str();
  app->add_option("--n-best", n_best,
                  "Write the N best outputs of each input line (N <= --beam), best first, as "
                  "Moses/Marian n-best lines: `ID ||| output ||| F0= log p ||| score`, with ID the "
                  "0-based input line and score the length-normalised log p that ranks them; "
                  "--attention-out then has one line per output line")
      ->capture_default_str();
  app->add_option("--batch", batch, "Sentences decoded together")->capture_default_str();
  app->add_option("--attention-out", attention_out,
                  "Write {\"src\", \"out\", \"attention\"} JSON per output line to this file "
                  "(one row of weights over the source per output token, the EOS row last)");
  app->add_option("--attention-layer", attention.layer,
                  "transformer: the decoder layer whose cross-attention --attention-out writes, "
                  "0-based (-1: the last)")
      ->capture_default_str();
  app->add_option("--attention-head", attention.head,
                  "transformer: one head of that layer, 0-based (-1: the mean over heads)")
      ->capture_default_str();
  app->add_option("--compute-type", compute,
                  "float32 | int8: int8 quantizes the weight matrices per row at load time "
                  "(faster, especially at small batches; slightly different scores)")
      ->capture_default_str();
  app->add_flag("--replace-unk", replace_unk,
                "Replace each <unk> in the output by the source word it attends to most "
                "(Jean et al. 2015; word-level targets)");
  app->add_option("--threads", threads, "Threads (0 = all cores)");
}

int TranslateCommand::run() const {
  check(beam >= 1, "--beam must be >= 1, got ", beam);
  check(batch >= 1, "--batch must be >= 1, got ", batch);
  check(n_best >= 1 && n_best <= beam, "--n-best must be in 1..--beam (", beam, "), got ", n_best);
  check(compute == "float32" || compute == "int8", "--compute-type ", compute,
        " (expected float32 or int8)");
  const std::vector<std::unique_ptr<ModelFiles>> models = load_models(model_dirs);
  std::vector<const Seq2SeqModel*> members;
  for (const auto& files : models) {
    if (compute == "int8") files->params.quantize_for_inference();
    members.push_back(files->model.get());
  }
  const ModelFiles* m = models[0].get();  // its text format serves every member
  const Ensemble ensemble(members);
  const Seq2SeqModel& model = members.size() == 1 ? *members[0] : ensemble;
  std::vector<std::string> lines = read_lines(std::cin, "<stdin>");
  for (auto& line : lines) line = model_input(*m, line);  // G2P: CMUdict entries -> words
  std::ofstream attn;
  if (!attention_out.empty()) {
    attn.open(attention_out);
    check(attn.good(), attention_out, ": cannot open for writing");
  }
  AttentionChoice choice = attention;
  choice.wanted = attn.is_open() || replace_unk;
  const size_t n = lines.size(), per_batch = static_cast<size_t>(batch), window = 50 * per_batch;
  const bool progress = isatty(STDERR_FILENO) != 0;
  const auto t0 = std::chrono::steady_clock::now();
  auto last_print = t0;
  size_t out_tokens = 0;
  for (size_t w0 = 0; w0 < n; w0 += window) {
    const size_t w1 = std::min(n, w0 + window);
    std::vector<std::vector<std::string>> units(w1 - w0);
    std::vector<std::vector<int32_t>> ids(w1 - w0);
    for (size_t k = w0; k < w1; ++k) {
      units[k - w0] = m->src_seg.split(lines[k]);
      ids[k - w0] = m->src_vocab.encode(units[k - w0]);
    }
    std::vector<size_t> order(w1 - w0);  // the window's lines, shortest source first
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return ids[a].size() < ids[b].size(); });
    std::vector<std::string> text(w1 - w0), attn_lines(w1 - w0);
    for (size_t b0 = 0; b0 < order.size(); b0 += per_batch) {
      const size_t b1 = std::min(order.size(), b0 + per_batch);
      std::vector<std::vector<int32_t>> src;
      for (size_t j = b0; j < b1; ++j) src.push_back(std::move(ids[order[j]]));
      auto hyps = decode_n_best(model, std::move(src),
                                {.beam = beam,
                                 .length_penalty = length_penalty,
                                 .max_len_ratio = max_len_ratio,
                                 .n_best = n_best},
                                choice);
      for (size_t j = b0; j < b1; ++j) {
        const size_t r = order[j];
        for (const Hypothesis& h : hyps[j - b0]) {
          auto out = replace_unk ? replace_unknowns(h.tokens, h.attention, units[r], m->tgt_vocab)
                                 : m->tgt_vocab.decode(h.tokens);
          out_tokens += h.tokens.size();
          std::string line = m->g2p ? lines[w0 + r] + "  " : std::string();  // G2P: the word
          line += m->tgt_seg.join(out);
          if (n_best > 1) {  // ID ||| output ||| F0= log p ||| score
            text[r] += std::to_string(w0 + r);
            text[r] += " ||| ";
            text[r] += line;
            text[r] += " ||| F0= ";
            text[r] += score_text(h.log_prob);
            text[r] += " ||| ";
            text[r] += score_text(normalised_score(h, length_penalty));
          } else {
            text[r] += line;
          }
          text[r] += '\n';
          if (attn.is_open()) {
            // the EOS row, unless the output was cut at the length limit before its EOS
            if (h.attention.size() > h.tokens.size()) out.push_back("</s>");
            attn_lines[r] +=
                nlohmann::json{{"src", units[r]}, {"out", out}, {"attention", h.attention}}.dump() +
                "\n";
          }
        }
      }
      const auto now = std::chrono::steady_clock::now();
      if (progress && (std::chrono::duration<double>(now - last_print).count() > 1 ||
                       (w1 == n && b1 == order.size()))) {
        last_print = now;
        const size_t done = w0 + b1;
        const double secs = std::chrono::duration<double>(now - t0).count();
        std::fprintf(
            stderr, "\rtranslate: %zu/%zu sentences  %.1f sent/s  %.0f tok/s  ETA %s ", done, n,
            static_cast<double>(done) / secs, static_cast<double>(out_tokens) / secs,
            clock_text(secs / static_cast<double>(done) * static_cast<double>(n - done)).c_str());
      }
    }
    for (size_t r = 0; r < text.size(); ++r) {
      std::cout << text[r];
      if (attn.is_open()) attn << attn_lines[r];
    }
    std::cout.flush();
  }
  if (progress && n > 0) std::fprintf(stderr, "\n");
  return 0;
}

}  // namespace heed::cli
