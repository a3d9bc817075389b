// `heed attention`: the attention of a trained model on sentences from stdin, drawn as
// heatmaps into one SVG or PNG file (by its extension): seq2seq alignments (output tokens x
// source tokens; for the Transformer one layer/head, their mean, or a grid of every head) or a
// classifier's r hops over the tokens; a model with syntactic attention also gets the tree it
// induces over the source, as arcs (viz/dependency_tree.h). The outputs go to stdout, one line
// per input line.
// Several seq2seq --model directories are drawn as one ensemble (models/ensemble.h). A speech
// recognizer reads audio paths (or manifest lines) from stdin and draws each transcript's
// alignment above the utterance's spectrogram (viz/speech_alignment.h).
// Leaves out: layouts and drawing (viz/), the models and search.
#include <iostream>

#include "commands.h"
#include "heed/data/text.h"
#include "heed/decode/classifier.h"
#include "heed/decode/limits.h"
#include "heed/decode/recognizer.h"
#include "heed/io/audio.h"
#include "heed/io/model_dir.h"
#include "heed/models/sentence_classifier.h"
#include "heed/util/error.h"
#include "heed/viz/alignment.h"
#include "heed/viz/dependency_tree.h"
#include "heed/viz/speech_alignment.h"

// Designated initializers leave the other members at their defaults on purpose (GCC 12
// warns about each one under -Wextra).
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace heed::cli {

void AttentionCommand::add(CLI::App& parent, int& threads) {
  app = parent.add_subcommand(
      "attention",
      "Draw what a trained model attends to, for each sentence on stdin, as heatmaps in one "
      "SVG or PNG file (rows: output tokens, or a classifier's hops; columns: source tokens; "
      "brightness: weight; a model with --syntactic-attention also gets the latent tree it induces "
      "over the source, drawn as arcs from each unit's parent); the outputs are printed on stdout. "
      "A speech recognizer reads audio "
      "paths (or manifest lines) on stdin and draws each transcript's alignment over 40 ms "
      "frames above the utterance's log-mel spectrogram (Chorowski et al. 2015)");
  app->add_option("--model", model_dirs,
                  "Model directory (heed train); several (--model A B): a sequence-to-sequence "
                  "ensemble, as `heed translate` decodes it, drawn with the mean of its members' "
                  "attention")
      ->required();
  app->add_option("--out", out, "Image file: .svg (text stays text) or .png")->required();
  app->add_option("--beam", align.search.beam, "Beam size for the outputs (1: greedy)")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, limits::kMaxBeam));
  app->add_option("--length-penalty", align.search.length_penalty,
                  "Beam: rank finished outputs by log p / length^alpha")
      ->capture_default_str();
  app->add_option(
         "--layer", align.layer,
         "transformer and conv: decoder layer whose attention is drawn, 0-based (-1: last; "
         "ConvS2S aligns in its middle layers)")
      ->capture_default_str();
  app->add_option("--head", align.head, "transformer: one head, 0-based (-1: mean over heads)")
      ->capture_default_str();
  app->add_flag("--all-heads", align.all_heads,
                "transformer: a grid with one heatmap per head of --layer");
  app->add_flag("--all-layers", align.all_layers,
                "transformer and conv: every decoder layer (with --all-heads: layers x heads)");
  app->add_option("--columns", columns, "Heatmaps per row of a grid (0: heads per layer)")
      ->capture_default_str()
      ->check(CLI::Range(0, 1000));
  app->add_option("--cell", style.cell, "Cell side in pixels")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 1000.0));
  app->add_option("--max-sentences", max_sentences,
                  "At most this many input lines are drawn (all are decoded)")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  app->add_option("--threads", threads, "Threads (0 = all cores)");
}

int AttentionCommand::run() const {
  const std::vector<std::string> lines = read_lines(std::cin, "<stdin>");
  check(!lines.empty(), "attention: no sentences on stdin");
  std::vector<viz::Figure> figures;  // one per drawn sentence, stacked top to bottom
  auto sentence_figure = [&](size_t index, const std::string& headline,
                             const std::vector<viz::Heatmap>& maps, size_t per_row) {
    std::vector<viz::Figure> parts;
    parts.reserve(maps.size());
    for (const auto& h : maps) parts.push_back(viz::heatmap_figure(h, style));
    return viz::titled(viz::grid(parts, per_row), std::to_string(index + 1) + ". " + headline,
                       style.font + 2);
  };
  // syntactic attention's tree (models with --syntactic-attention), under the heatmaps
  auto with_tree = [&](const viz::Figure& above, const std::vector<std::string>& tokens,
                       const std::vector<std::vector<float>>& tree) {
    if (tree.empty()) return above;
    return viz::grid(
        {above, viz::titled(viz::dependency_tree_figure(tokens, tree, style),
                            "syntactic attention: each unit's parent", style.font + 1)},
        1, 12);
  };
  const size_t drawn =
      std::min(lines.size(), static_cast<size_t>(std::max<int64_t>(max_sentences, 1)));
  const std::string& model_dir = model_dirs.front();
  const nlohmann::json config = read_config(model_dir);
  if (config.value("src_units", "") == "audio") {
    check(model_dirs.size() == 1, "attention: ", model_dir,
          " is a speech recognizer (no ensemble)");
    check(!align.all_heads && !align.all_layers && align.layer == -1 && align.head == -1,
          "attention: --layer/--head/--all-heads/--all-layers are for a Transformer translating "
          "text; a recognizer's figure is its decoder's alignment");
    const Recognizer recognizer(model_dir);
    const bool ctc = recognizer.files().model->frame_labeller() != nullptr;
    for (size_t i = 0; i < lines.size(); ++i) {
      // an audio path, or a manifest line (its path before the tab)
      const std::string path = lines[i].substr(0, lines[i].find('\t'));
      const Audio audio = read_audio(path);
      const std::vector<float> f = recognizer.features(audio.samples);
      const std::vector<Transcript> t = recognizer.transcribe_features(
          {std::span<const float>(f)},
          {.beam = static_cast<int>(align.search.beam), .alignment = true})[0];
      std::cout << t.front().text << "\n";
      if (i < drawn)
        figures.push_back(viz::speech_alignment_figure(
            t.front(), f, recognizer.bins(), ctc, style,
            std::to_string(i + 1) + ". " + path + "  →  " + t.front().text));
    }
  } else if (config_family(config, model_dir).role == ModelRole::Classifier) {
    check(model_dirs.size() == 1, "attention: an ensemble is for sequence-to-sequence models; ",
          model_dir, " is a classifier");
    check(!align.all_heads && !align.all_layers && align.layer == -1 && align.head == -1,
          "attention: --layer/--head/--all-heads/--all-layers are for a Transformer; a "
          "classifier shows its hops");
    const Classifier classifier(model_dir);
    check(classifier.config().has_attention(), model_dir, ": this classifier pools by ",
          pooling_name(classifier.config().pooling),
          ", which has no attention to draw (attention pooling, or a Transformer with cls, has)");
    std::vector<Prediction> preds = classifier.classify(lines, {.name = "<stdin>"});
    for (size_t i = 0; i < preds.size(); ++i) {
      std::cout << preds[i].label << "\n";
      if (i < drawn)
        figures.push_back(with_tree(
            sentence_figure(i, lines[i],
                            {viz::classifier_heatmap(preds[i], std::to_string(preds[i].label),
                                                     classifier.config())},
                            1),
            preds[i].tokens, preds[i].tree));
    }
  } else {
    const Translator translator(model_dirs);
    std::vector<viz::Alignment> al = viz::align(translator, lines, align);
    const size_t per_row = columns > 0 ? static_cast<size_t>(columns)
                           : align.all_heads
                               ? static_cast<size_t>(translator.model().decoder_heads().heads)
                               : 1;
    for (size_t i = 0; i < al.size(); ++i) {
      std::cout << al[i].output << "\n";
      if (i < drawn)
        figures.push_back(with_tree(
            sentence_figure(i, al[i].source + "  →  " + al[i].output, al[i].maps, per_row),
            al[i].units, al[i].tree));
    }
  }
  viz::write_figure(viz::grid(figures, 1, 32), out);
  std::cerr << "heed attention: " << figures.size() << " sentence(s) drawn in " << out << "\n";
  return 0;
}

}  // namespace heed::cli
