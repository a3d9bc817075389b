// Running a classifier (see the header).
#include "heed/decode/classifier.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "heed/autograd/graph.h"
#include "heed/data/text.h"
#include "heed/util/error.h"

namespace heed {

std::vector<Prediction> classify(const ClassifierFiles& m, const std::vector<std::string>& lines,
                                 const ClassifyOptions& options) {
  const std::string& name = options.name;
  const int64_t batch = options.batch;
  const bool attention = options.attention;
  std::vector<Prediction> out(lines.size());
  std::vector<std::vector<int32_t>> s;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string line = lines[i];
    if (m.model->config().lowercase) lowercase_ascii(line);  // as read_sst_trees did in training
    out[i].tokens = m.seg.split(line);
    check(!out[i].tokens.empty(), name, ":", i + 1, ": an empty line (nothing to classify)");
    s.push_back(m.vocab.encode(out[i].tokens));
  }
  Graph g(Mode::Inference);
  for (size_t i = 0; i < s.size(); i += static_cast<size_t>(batch)) {
    const size_t n = std::min(s.size() - i, static_cast<size_t>(batch));
    ClassifyBatch b = slice_classify_batch(s, {}, i, n);
    SentenceClassifier::Output o = m.model->forward(g, b, attention);
    const int64_t C = o.logits.dim(1);
    for (size_t k = 0; k < n; ++k) {
      Prediction& p = out[i + k];
      const float* z = o.logits.value().data() + static_cast<int64_t>(k) * C;
      check(std::all_of(z, z + C, [](float v) { return std::isfinite(v); }), name, ":", i + k + 1,
            ": the classifier's scores are not finite: its weights overflow the "
            "arithmetic (a corrupt or diverged model)");
      const float top = *std::max_element(z, z + C);
      double total = 0;
      for (int64_t c = 0; c < C; ++c) total += std::exp(z[c] - top);
      for (int64_t c = 0; c < C; ++c)
        p.probs.push_back(static_cast<float>(std::exp(z[c] - top) / total));
      p.label = static_cast<int32_t>(std::max_element(z, z + C) - z);
      if (attention && o.tree.shape().rank() == 3) {  // [B, S + 1, S]: the words' rows
        const int64_t S = o.tree.shape()[2], len = b.lengths[k];
        const float* T = o.tree.data() + static_cast<int64_t>(k) * (S + 1) * S;
        for (int64_t h = 0; h <= len; ++h) p.tree.emplace_back(T + h * S, T + h * S + len);
      }
      if (!attention || !o.A.valid()) continue;
      const int64_t r = o.A.dim(1), S = o.A.dim(2), len = b.lengths[k];
      const float* A = o.A.value().data() + static_cast<int64_t>(k) * r * S;  // [r, S]
      for (int64_t h = 0; h < r; ++h) p.attention.emplace_back(A + h * S, A + h * S + len);
      if (m.model->config().pooling != Pooling::Attention) continue;  // hops only
      double f = 0;                                                   // ||A A^T - I||_F
      for (int64_t a = 0; a < r; ++a)
        for (int64_t c = 0; c < r; ++c) {
          double dot = 0;
          for (int64_t t = 0; t < len; ++t) dot += double{A[a * S + t]} * A[c * S + t];
          f += (dot - (a == c)) * (dot - (a == c));
        }
      p.redundancy = std::sqrt(f);
    }
    g.clear();
  }
  return out;
}

Classifier::Classifier(const std::vector<std::string>& model_dirs) {
  check(!model_dirs.empty(), "a classifier needs a model directory");
  for (const std::string& dir : model_dirs) {
    members_.push_back(load_classifier(dir));
    members_.back()->params.prepare_for_inference(/*int8=*/false);
    const int64_t C = members_.back()->model->config().classes, C0 = config().classes;
    check(C == C0, "an ensemble of classifiers: ", dir, " has ", C, " classes and ",
          model_dirs.front(), " has ", C0);
  }
}

std::vector<Prediction> Classifier::classify(const std::vector<std::string>& lines,
                                             const ClassifyOptions& options) const {
  std::vector<Prediction> out = heed::classify(*members_.front(), lines, options);
  if (members_.size() == 1) return out;
  // p_c = (1/M) sum_m p_mc: the members' probabilities averaged, the label their argmax
  ClassifyOptions probs_only = options;
  probs_only.attention = false;
  const auto M = static_cast<double>(members_.size());
  std::vector<std::vector<double>> total(out.size());
  for (size_t i = 0; i < out.size(); ++i) total[i].assign(out[i].probs.begin(), out[i].probs.end());
  for (size_t m = 1; m < members_.size(); ++m) {
    const std::vector<Prediction> more = heed::classify(*members_[m], lines, probs_only);
    for (size_t i = 0; i < out.size(); ++i)
      for (size_t c = 0; c < total[i].size(); ++c) total[i][c] += more[i].probs[c];
  }
  for (size_t i = 0; i < out.size(); ++i) {
    for (size_t c = 0; c < total[i].size(); ++c)
      out[i].probs[c] = static_cast<float>(total[i][c] / M);
    out[i].label =
        static_cast<int32_t>(std::max_element(total[i].begin(), total[i].end()) - total[i].begin());
  }
  return out;
}

}  // namespace heed
