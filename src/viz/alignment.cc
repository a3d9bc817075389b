// Alignments of trained models as heatmaps (see alignment.h).
// Leaves out: drawing (figure.h), the search itself (decode/beam_search.cc).
#include "heed/viz/alignment.h"

#include <algorithm>
#include <limits>

#include "heed/util/error.h"

// Designated initializers leave the other members at their defaults on purpose (GCC 12
// warns about each one under -Wextra).
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace heed::viz {

Heatmap hypothesis_heatmap(const Translator& translator, const TranslationResult& r,
                           const TranslationHypothesis& hyp, std::string title) {
  std::vector<std::string> rows = hyp.tokens;
  if (hyp.attention.size() > hyp.tokens.size())  // EOS, or a CTC model's blank
    rows.emplace_back(translator.model().frame_labeller() ? "<blank>" : "</s>");
  Heatmap map{.title = std::move(title), .rows = rows, .cols = r.source, .weights = hyp.attention};
  // CTC: the cells its most probable alignment visits (K positions per source unit)
  const size_t per_unit = r.source.empty() ? 0 : hyp.path.size() / r.source.size();
  for (size_t i = 0; per_unit > 0 && i < hyp.path.size(); ++i) {
    const std::pair<int, int> cell{hyp.path[i], static_cast<int>(i / per_unit)};
    if (map.marks.empty() || map.marks.back() != cell) map.marks.push_back(cell);
  }
  // monotonic attention and MoChA: the stop of each output step (MoChA's chunk is the weights
  // that end there); a row with none ran off the end of the source
  if (translator.model().hard_monotonic_attention())
    for (size_t row = 0; row < hyp.attention.size(); ++row)
      for (size_t j = hyp.attention[row].size(); j-- > 0;)
        if (hyp.attention[row][j] > 0.f) {
          map.marks.emplace_back(static_cast<int>(row), static_cast<int>(j));
          break;
        }
  return map;
}

std::vector<Alignment> align(const Translator& translator, const std::vector<std::string>& lines,
                             const AlignOptions& o) {
  const auto [layers, heads, first] = translator.model().decoder_heads();
  const bool transformer = heads > 0;
  if (!transformer) {
    const auto& members = translator.members();
    const auto other = std::find_if(members.begin(), members.end(), [](const auto& f) {
      return f->model->decoder_heads().heads == 0;
    });
    check(!o.all_heads && !o.all_layers && o.layer == -1 && o.head == -1,
          "attention: layers and heads are a Transformer's; ",
          members.size() > 1 ? "a member of the ensemble" : "this model", " is ", (*other)->family);
  }
  // the (layer, head) pairs drawn for every sentence
  std::vector<AttentionChoice> choices;
  std::vector<std::string> titles;
  if (transformer) {
    check(o.layer >= -1 && o.layer < layers, "attention: --layer ", o.layer, " of a decoder with ",
          layers, " layers (0..", layers - 1, ", -1: the last)");
    check(o.layer < 0 || o.layer >= first, "attention: --layer ", o.layer, ": layers 0..",
          first - 1, " of this decoder do not attend to the source");
    check(o.head >= -1 && o.head < heads, "attention: --head ", o.head, " of ", heads,
          " heads (0..", heads - 1, ", -1: the mean)");
    std::vector<int> ls = {o.layer < 0 ? layers - 1 : o.layer};
    if (o.all_layers) {
      ls.clear();
      for (int l = first; l < layers; ++l) ls.push_back(l);  // the layers that attend
    }
    for (int l : ls) {
      std::vector<int> hs = {o.head};
      if (o.all_heads) {
        hs.clear();
        for (int h = 0; h < heads; ++h) hs.push_back(h);
      }
      for (int h : hs) {
        choices.push_back({.wanted = true, .layer = l, .head = h});
        titles.push_back("layer " + std::to_string(l) +
                         (heads == 1 ? ""  // one attention per layer (ConvS2S)
                          : h < 0    ? ", mean of heads"
                                     : ", head " + std::to_string(h)));
      }
    }
  } else {
    choices.push_back({});
    titles.emplace_back();
  }
  std::vector<Alignment> out(lines.size());
  // the search is deterministic: every choice decodes the same output, with its own weights
  for (size_t c = 0; c < choices.size(); ++c) {
    const auto results = translator.translate(lines, {.beam_size = o.search.beam,
                                                      .length_penalty = o.search.length_penalty,
                                                      .max_len_ratio = o.search.max_len_ratio,
                                                      .max_batch_size = o.batch,
                                                      .return_attention = true,
                                                      .return_tree = c == 0,
                                                      .attention_layer = choices[c].layer,
                                                      .attention_head = choices[c].head});
    for (size_t k = 0; k < lines.size(); ++k) {
      const TranslationResult& r = results[k];
      const TranslationHypothesis& hyp = r.hypotheses.front();
      if (c == 0) {
        out[k].source = r.input;
        out[k].output = hyp.text;
        out[k].units = r.source;
        out[k].tree = r.tree;
      }
      out[k].maps.push_back(hypothesis_heatmap(translator, r, hyp, titles[c]));
    }
  }
  return out;
}

Heatmap classifier_heatmap(const Prediction& p, const std::string& class_name,
                           const ClassifierConfig& config) {
  Heatmap h{.title = "label " + class_name, .cols = p.tokens, .weights = p.attention};
  for (size_t r = 0; r < p.attention.size(); ++r)
    h.rows.push_back(config.attention_row(static_cast<int64_t>(r)));
  return h;
}

}  // namespace heed::viz
