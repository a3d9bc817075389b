// What a trained model attends to, as heatmaps ready to draw: a seq2seq model's alignment of
// each output token over the source (decoded by greedy or beam search; for the Transformer the
// cross-attention of one layer and head, their mean, or every head), and a classifier's r hops
// over the tokens (Lin et al. 2017, fig. 1).
// Leaves out: drawing and files (figure.h), the search (decode/).
#pragma once

#include <string>
#include <vector>

#include "heed/decode/beam_search.h"
#include "heed/decode/classifier.h"
#include "heed/decode/translator.h"
#include "heed/viz/heatmap.h"

namespace heed::viz {

struct AlignOptions {
  BeamOptions search{.beam = 1};  // beam 1: greedy (n_best unused: one output per sentence)
  int layer = -1;                 // transformer: decoder layer, 0-based (-1: the last)
  int head = -1;                  // transformer: one head, 0-based (-1: the mean over heads)
  bool all_heads = false;         // transformer: one heatmap per head of `layer`
  bool all_layers = false;        // transformer: ... of every layer (with all_heads: L x H)
  int64_t batch = 32;             // sentences decoded together
};

struct Alignment {
  std::string source, output;      // the input line (G2P: the word) and the output text
  std::vector<Heatmap> maps;       // one, or one per (layer, head) asked for; rows end with </s>
                                   // (CTC: each label's alignment posterior, then <blank>'s)
  std::vector<std::string> units;  // the source's units
  std::vector<std::vector<float>> tree;  // syntactic attention's over them (TranslationResult)
};

// lines: sentences (G2P: words or CMUdict entries), decoded by the translator (one model or
// an ensemble: its output and the mean of the members' attention). Throws heed::Error for
// layer/head choices the model does not have (an ensemble: each member must have them).
std::vector<Alignment> align(const Translator& translator, const std::vector<std::string>& lines,
                             const AlignOptions& o);

// One decoded hypothesis (decoded with return_attention) as a heatmap: rows its units and
// </s> (CTC: <blank>), columns the source units; marks on CTC's best path and on monotonic
// attention's stops.
Heatmap hypothesis_heatmap(const Translator& translator, const TranslationResult& r,
                           const TranslationHypothesis& hyp, std::string title = {});
// The classifier's hops over the tokens of one prediction: rows "hop 1".."hop r".
// class_name: how the predicted label is shown in the title.
Heatmap classifier_heatmap(const Prediction& p, const std::string& class_name,
                           const ClassifierConfig& config);

}  // namespace heed::viz
