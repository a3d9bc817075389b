// Alignments of trained models as heatmaps (see alignment.h).
// Leaves out: drawing (figure.h), the search itself (decode/beam_search.cc).
#include "heed/viz/alignment.h"

#include <algorithm>
#include <limits>

#include "heed/models/ensemble.h"
#include "heed/util/error.h"

// Designated initializers leave the other members at their defaults on purpose (GCC 12
// warns about each one under -Wextra).
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace heed::viz {

std::vector<Alignment> align(const ModelFiles& m, const std::vector<std::string>& lines,
                             const AlignOptions& o) {
  return align(std::vector<const ModelFiles*>{&m}, lines, o);
}

DecoderHeads decoder_heads(const std::vector<const ModelFiles*>& models) {
  DecoderHeads fewest{std::numeric_limits<int>::max(), std::numeric_limits<int>::max()};
  for (const ModelFiles* member : models) {
    const DecoderHeads h = member->model->decoder_heads();
    if (h.heads == 0) return {};
    fewest.layers = std::min(fewest.layers, h.layers);
    fewest.heads = std::min(fewest.heads, h.heads);
  }
  return models.empty() ? DecoderHeads{} : fewest;
}

std::vector<Alignment> align(const std::vector<const ModelFiles*>& models,
                             const std::vector<std::string>& lines, const AlignOptions& o) {
  check(!models.empty(), "attention: no model");
  const ModelFiles& m = *models.front();  // its text format serves every member
  const auto [layers, heads] = decoder_heads(models);
  const bool transformer = heads > 0;
  if (!transformer) {
    const ModelFiles* other = *std::find_if(models.begin(), models.end(), [](const auto* f) {
      return f->model->decoder_heads().heads == 0;
    });
    check(!o.all_heads && !o.all_layers && o.layer == -1 && o.head == -1,
          "attention: layers and heads are a Transformer's; ",
          models.size() > 1 ? "a member of the ensemble" : "this model", " is ", other->family);
  }
  // the (layer, head) pairs drawn for every sentence
  std::vector<AttentionChoice> choices;
  std::vector<std::string> titles;
  if (transformer) {
    check(o.layer >= -1 && o.layer < layers, "attention: --layer ", o.layer, " of a decoder with ",
          layers, " layers (0..", layers - 1, ", -1: the last)");
    check(o.head >= -1 && o.head < heads, "attention: --head ", o.head, " of ", heads,
          " heads (0..", heads - 1, ", -1: the mean)");
    std::vector<int> ls = {o.layer < 0 ? layers - 1 : o.layer};
    if (o.all_layers) {
      ls.clear();
      for (int l = 0; l < layers; ++l) ls.push_back(l);
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
                         (h < 0 ? ", mean of heads" : ", head " + std::to_string(h)));
      }
    }
  } else {
    choices.push_back({});
    titles.emplace_back();
  }
  std::vector<const Seq2SeqModel*> members;
  members.reserve(models.size());
  for (const ModelFiles* member : models) members.push_back(member->model.get());
  const Ensemble ensemble(members);
  const Seq2SeqModel& model = members.size() == 1 ? *members[0] : ensemble;
  std::vector<Alignment> out(lines.size());
  for (size_t i = 0; i < lines.size(); i += static_cast<size_t>(o.batch)) {
    const size_t end = std::min(lines.size(), i + static_cast<size_t>(o.batch));
    std::vector<std::vector<std::string>> units;
    std::vector<std::vector<int32_t>> src;
    for (size_t k = i; k < end; ++k) {
      out[k].source = model_input(m, lines[k]);
      units.push_back(m.src_seg.split(out[k].source));
      src.push_back(m.src_vocab.encode(units.back()));
    }
    // the search is deterministic: every choice decodes the same output, with its own weights
    for (size_t c = 0; c < choices.size(); ++c) {
      auto hyps = decode_batch(model, src, o.search, choices[c]);
      for (size_t k = i; k < end; ++k) {
        const Hypothesis& hyp = hyps[k - i];
        std::vector<std::string> tokens = m.tgt_vocab.decode(hyp.tokens);
        if (c == 0) out[k].output = m.tgt_seg.join(tokens);
        if (hyp.attention.size() > hyp.tokens.size()) tokens.emplace_back("</s>");
        out[k].maps.push_back(
            {.title = titles[c], .rows = tokens, .cols = units[k - i], .weights = hyp.attention});
      }
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
