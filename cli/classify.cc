// `heed classify`: a trained classifier on sentences from stdin, one label per line (and the
// class probabilities with --probs); --attention-out writes the self-attention of each line.
// Several --model directories classify as one ensemble (decode/classifier.h).
// Leaves out: the model (models/sentence_classifier) and running it (train/classifier_trainer).
#include <cstdio>
#include <iostream>
#include <optional>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "heed/data/text.h"
#include "heed/decode/classifier.h"
#include "heed/util/error.h"

namespace heed::cli {

void ClassifyCommand::add(CLI::App& parent, int& threads) {
  app = parent.add_subcommand("classify",
                              "Classify sentences from stdin with a model of `heed train "
                              "--task classify`: one label per line on stdout");
  app->add_option("--model", model_dirs,
                  "Model directory (from heed train --task classify); several (--model A B, or "
                  "--model repeated): an ensemble averaging their class probabilities (the label "
                  "is the argmax of the mean; each member reads the text with its own vocabulary; "
                  "--attention-out writes the first member's attention)")
      ->required();
  app->add_flag("--probs", probs, "After each label, a tab and the probability of every class");
  app->add_option(
      "--attention-out", attention_out,
      "Write one JSON object per line: {\"tokens\": [...], \"label\": k, "
      "\"attention\": [[...one row per hop over the tokens...]], \"redundancy\": "
      "||A A^T - I||_F} (self-attention models); with --syntactic-attention also \"tree\": "
      "[[...]], row h (0: the root, then each token) the probability of being each "
      "token's parent");
  app->add_option("--batch", batch, "Sentences classified together")->capture_default_str();
  app->add_option("--threads", threads, "Threads (0 = all cores)");
}

int ClassifyCommand::run() const {
  const Classifier classifier(model_dirs);
  std::vector<std::string> lines = read_lines(std::cin, "<stdin>");
  std::vector<Prediction> out = classifier.classify(
      lines, {.batch = batch, .attention = !attention_out.empty(), .name = "<stdin>"});
  std::optional<AtomicFile> attn;  // put in place whole once every line is written
  if (!attention_out.empty()) attn.emplace(attention_out);
  for (const Prediction& p : out) {
    std::cout << p.label;
    if (probs) {
      std::cout << '\t';
      for (size_t c = 0; c < p.probs.size(); ++c) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%s%.4f", c ? " " : "", p.probs[c]);
        std::cout << buf;
      }
    }
    std::cout << '\n';
    if (attn) {
      nlohmann::json j{{"tokens", p.tokens},
                       {"label", p.label},
                       {"attention", p.attention},
                       {"redundancy", p.redundancy}};
      if (!p.tree.empty()) j["tree"] = p.tree;  // syntactic attention's: [h][m - 1]
      attn->write(j.dump() + '\n');
    }
  }
  check_stdout();
  if (attn) attn->commit();
  return 0;
}

}  // namespace heed::cli
