// `heed translate`: stdin -> stdout, one output line per input line, optionally with the
// attention weights as JSON lines. For a G2P model, input lines may be words or CMUdict
// entries ("WORD  PH ..."), and output lines are CMUdict entries, ready for `heed score`.
// Leaves out: the models and search (models/, decode/).
#include <fstream>
#include <iostream>

#include "commands.h"
#include "heed/data/text.h"
#include "heed/decode/beam_search.h"
#include "heed/decode/replace_unk.h"
#include "heed/util/error.h"

namespace heed::cli {

void TranslateCommand::add(CLI::App& parent, int& threads) {
  app = parent.add_subcommand("translate", "Translate stdin to stdout with a trained model");
  app->add_option("--model", model_dir, "Model directory (from heed train)")->required();
  app->add_option("--beam", beam, "Beam size (1: greedy)")->capture_default_str();
  app->add_option("--length-penalty", length_penalty,
                  "Beam: rank finished outputs by log p / length^alpha (0: raw log p)")
      ->capture_default_str();
  app->add_option("--max-len-ratio", max_len_ratio, "Output length limit: ratio x source + 10")
      ->capture_default_str();
  app->add_option("--batch", batch, "Sentences decoded together")->capture_default_str();
  app->add_option("--attention-out", attention_out,
                  "Write {\"src\", \"out\", \"attention\"} JSON per line to this file (one row "
                  "of weights over the source per output token, the EOS row last)");
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
  check(compute == "float32" || compute == "int8", "--compute-type ", compute,
        " (expected float32 or int8)");
  auto m = load_model(model_dir);
  if (compute == "int8") m->params.quantize_for_inference();
  std::vector<std::string> lines = read_lines(std::cin, "<stdin>");
  for (auto& line : lines) line = model_input(*m, line);  // G2P: CMUdict entries -> words
  std::ofstream attn;
  if (!attention_out.empty()) {
    attn.open(attention_out);
    check(attn.good(), attention_out, ": cannot open for writing");
  }
  for (size_t i = 0; i < lines.size(); i += static_cast<size_t>(batch)) {
    std::vector<std::vector<int32_t>> src;
    std::vector<std::vector<std::string>> units;
    for (size_t k = i; k < std::min(lines.size(), i + static_cast<size_t>(batch)); ++k) {
      units.push_back(m->src_seg.split(lines[k]));
      src.push_back(m->src_vocab.encode(units.back()));
    }
    AttentionChoice choice = attention;
    choice.wanted = attn.is_open() || replace_unk;
    auto hyps = decode_batch(
        *m->model, std::move(src),
        {.beam = beam, .length_penalty = length_penalty, .max_len_ratio = max_len_ratio}, choice);
    for (size_t k = 0; k < hyps.size(); ++k) {
      auto out = replace_unk
                     ? replace_unknowns(hyps[k].tokens, hyps[k].attention, units[k], m->tgt_vocab)
                     : m->tgt_vocab.decode(hyps[k].tokens);
      std::string text = m->tgt_seg.join(out);
      std::cout << (m->g2p ? lines[i + k] + "  " + text : text) << "\n";
      if (attn.is_open()) {
        // the EOS row, unless the output was cut at the length limit before its EOS
        if (hyps[k].attention.size() > hyps[k].tokens.size()) out.push_back("</s>");
        attn << nlohmann::json{{"src", units[k]}, {"out", out}, {"attention", hyps[k].attention}}
                    .dump()
             << "\n";
      }
    }
  }
  return 0;
}

}  // namespace heed::cli
