// The BiLSTM sentence classifier with self-attention or pooling (see the header).
#include "heed/models/sentence_classifier.h"

#include "heed/autograd/ops.h"
#include "heed/data/vocab.h"
#include "heed/kernels/random.h"
#include "heed/models/seq2seq.h"
#include "heed/nn/attention/attention.h"
#include "heed/util/error.h"

namespace heed {

const char* pooling_name(Pooling p) {
  switch (p) {
    case Pooling::Attention:
      return "attention";
    case Pooling::Max:
      return "max";
    case Pooling::Mean:
      return "mean";
    case Pooling::Last:
      return "last";
  }
  return "?";
}

Pooling parse_pooling(const std::string& s) {
  for (Pooling p : {Pooling::Attention, Pooling::Max, Pooling::Mean, Pooling::Last})
    if (s == pooling_name(p)) return p;
  fail("unknown pooling '", s, "' (expected attention, max, mean or last)");
}

int64_t ClassifierConfig::features() const {
  const int64_t h = encoder.hidden * (encoder.bidirectional ? 2 : 1);
  return pooling == Pooling::Attention ? hops * h : h;
}

nlohmann::json ClassifierConfig::to_json() const {
  return {{"model", "self-attentive"},
          {"cell", cell_name(encoder.cell)},
          {"vocab", encoder.vocab},
          {"embed", encoder.embed},
          {"hidden", encoder.hidden},
          {"layers", encoder.layers},
          {"bidirectional", encoder.bidirectional},
          {"pooling", pooling_name(pooling)},
          {"attn_dim", attn_dim},
          {"hops", hops},
          {"mlp_hidden", mlp_hidden},
          {"classes", classes},
          {"dropout", dropout},
          {"penalty", penalty},
          {"word_dropout", word_dropout}};
}

ClassifierConfig ClassifierConfig::from_json(const nlohmann::json& j) {
  ClassifierConfig c;
  try {
    check(j.at("model").get<std::string>() == "self-attentive",
          "config.json: not a classifier model");
    c.encoder.cell = parse_cell(j.at("cell").get<std::string>());
    c.encoder.vocab = j.at("vocab").get<int64_t>();
    c.encoder.embed = j.at("embed").get<int64_t>();
    c.encoder.hidden = j.at("hidden").get<int64_t>();
    c.encoder.layers = j.at("layers").get<int>();
    c.encoder.bidirectional = j.at("bidirectional").get<bool>();
    c.pooling = parse_pooling(j.at("pooling").get<std::string>());
    c.attn_dim = j.at("attn_dim").get<int64_t>();
    c.hops = j.at("hops").get<int64_t>();
    c.mlp_hidden = j.at("mlp_hidden").get<int64_t>();
    c.classes = j.at("classes").get<int64_t>();
    c.dropout = j.at("dropout").get<float>();
    c.penalty = j.at("penalty").get<float>();
    c.word_dropout = j.value("word_dropout", 0.f);  // absent from older models
  } catch (const nlohmann::json::exception& e) {
    fail("config.json: malformed classifier config (", e.what(), ")");
  }
  c.encoder.dropout = c.dropout;
  return c;
}

ClassifyBatch make_classify_batch(const std::vector<std::vector<int32_t>>& sentences,
                                  std::span<const int32_t> labels) {
  // the source side of an encoder-decoder batch: time-major, padded, empty sentences refused
  Seq2SeqBatch src = make_batch(sentences, std::vector<std::vector<int32_t>>(sentences.size()),
                                /*reverse_source=*/false);
  return {.B = src.B,
          .S = src.S,
          .ids = std::move(src.src),
          .lengths = std::move(src.src_lengths),
          .labels = {labels.begin(), labels.end()}};
}

SentenceClassifier::SentenceClassifier(const ClassifierConfig& c, const Scope& s)
    : config_(c),
      encoder_(c.encoder, s / "encoder"),
      W1_(&s.param("mlp/W1", {c.mlp_hidden, c.features()}, Init::glorot_uniform())),
      b1_(&s.param("mlp/b1", {c.mlp_hidden}, Init::zeros())),
      W2_(&s.param("mlp/W2", {c.classes, c.mlp_hidden}, Init::glorot_uniform())),
      b2_(&s.param("mlp/b2", {c.classes}, Init::zeros())) {
  check(c.classes >= 2, "classifier: at least 2 classes, got ", c.classes);
  if (c.pooling == Pooling::Attention) {
    check(c.hops >= 1, "classifier: --hops must be >= 1, got ", c.hops);
    attention_.emplace_back(encoder_.annotation_dim(), c.attn_dim, c.hops, s / "attention");
  }
}

SentenceClassifier::Output SentenceClassifier::forward(Graph& g, const ClassifyBatch& b) const {
  const int64_t B = b.B, S = b.S, D = encoder_.annotation_dim();
  std::span<const int32_t> ids = b.ids;  // [S, B]
  std::vector<int32_t> dropped;
  if (g.training() && config_.word_dropout > 0.f) {
    Rng rng(g.next_stream());
    dropped = b.ids;
    for (int32_t& id : dropped)
      if (id != Vocab::kPad && rng.uniform() < config_.word_dropout) id = Vocab::kUnk;
    ids = dropped;
  }
  RnnEncoder::Output enc = encoder_.forward(g, ids, S, b.lengths);
  Var H = enc.annotations;  // [B, S, 2u]
  Output out;
  Var features;  // [B, F]
  switch (config_.pooling) {
    case Pooling::Attention: {
      SelfAttentionPooling::Output p = attention_.front().forward(g, H, b.lengths);
      out.A = p.A;                                          // [B, r, S]
      out.penalty = attention_penalty(g, p.A);              // []
      features = reshape(p.M, Shape{B, config_.hops * D});  // [B, r * 2u]
      break;
    }
    case Pooling::Max: {  // max_t h_t over the real positions (padding at -inf)
      Tensor pad = padding_mask(b.lengths, S, g).reshape(Shape{B, S, 1});
      features = max(add(H, g.constant(pad)), 1);
      break;
    }
    case Pooling::Mean: {  // sum_t h_t / n
      Tensor w = g.alloc(Shape{B, S, 1});
      for (int64_t n = 0; n < B; ++n)
        for (int64_t t = 0; t < S; ++t)
          w.data()[n * S + t] = t < b.lengths[n] ? 1.f / static_cast<float>(b.lengths[n]) : 0.f;
      features = sum(mul(H, g.constant(w)), 1);  // [B, 2u]
      break;
    }
    case Pooling::Last:  // [->h_n ; <-h_1]
      features = enc.final_bwd.valid() ? concat({enc.final_fwd, enc.final_bwd}, 1) : enc.final_fwd;
      break;
  }
  // the MLP classifier
  Var hidden = relu(linear(dropout(features, config_.dropout), g.param(*W1_), g.param(*b1_)));
  out.logits = linear(dropout(hidden, config_.dropout), g.param(*W2_), g.param(*b2_));  // [B, C]
  return out;
}

Var SentenceClassifier::loss(Graph& g, const ClassifyBatch& b) const {
  check(static_cast<int64_t>(b.labels.size()) == b.B, "classify: a batch without labels");
  Output o = forward(g, b);
  Var ce = cross_entropy(o.logits, b.labels);
  if (config_.pooling != Pooling::Attention || config_.penalty == 0.f) return ce;
  return add(ce, affine(o.penalty, config_.penalty, 0.f));
}

}  // namespace heed
