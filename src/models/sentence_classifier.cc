// The BiLSTM sentence classifier with self-attention or pooling (see the header).
#include "heed/models/sentence_classifier.h"

#include <cmath>
#include <string>

#include "heed/autograd/ops.h"
#include "heed/data/vocab.h"
#include "heed/kernels/random.h"
#include "heed/models/model_options.h"
#include "heed/models/seq2seq.h"
#include "heed/nn/syntactic_attention.h"
#include "heed/util/error.h"
#include "heed/util/json.h"
#include "heed/util/overloaded.h"

namespace heed {

std::span<const Named<Pooling>> names(Pooling) {
  static constexpr Named<Pooling> kNames[] = {{Pooling::Attention, "attention"},
                                              {Pooling::Max, "max"},
                                              {Pooling::Mean, "mean"},
                                              {Pooling::Last, "last"},
                                              {Pooling::Cls, "cls"}};
  return kNames;
}

const char* pooling_name(Pooling p) {
  return name_of(p);
}

Pooling parse_pooling(const std::string& s) {
  return parse_name<Pooling>(s, "pooling");
}

ClassifyBatch slice_classify_batch(const std::vector<std::vector<int32_t>>& s,
                                   const std::vector<int32_t>& labels, size_t first, size_t n) {
  std::vector<std::vector<int32_t>> part(s.begin() + static_cast<std::ptrdiff_t>(first),
                                         s.begin() + static_cast<std::ptrdiff_t>(first + n));
  std::span<const int32_t> y;
  if (!labels.empty()) y = std::span(labels).subspan(first, n);
  return make_classify_batch(part, y);
}

int64_t ClassifierConfig::annotation_dim() const {
  return std::visit(
      overloaded{[](const RnnEncoderConfig& e) { return e.hidden * (e.bidirectional ? 2 : 1); },
                 [](const TransformerEncoderConfig& e) { return e.layer.d_model; },
                 [](const ConvEncoderConfig& e) { return e.channels; },
                 [](const KimEncoderConfig& e) { return e.width(); }},
      encoder);
}

bool ClassifierConfig::has_attention() const {
  return pooling == Pooling::Attention ||
         (std::holds_alternative<TransformerEncoderConfig>(encoder) && pooling == Pooling::Cls);
}

std::string ClassifierConfig::attention_row(int64_t r) const {
  return pooling == Pooling::Attention ? "hop " + std::to_string(r + 1) : "[CLS], last layer";
}

int64_t ClassifierConfig::features() const {
  return pooling == Pooling::Attention ? hops * annotation_dim() : annotation_dim();
}

const char* ClassifierConfig::family() const {
  return std::visit(
      overloaded{[](const RnnEncoderConfig&) { return SelfAttentiveClassifier::kFamily; },
                 [](const TransformerEncoderConfig&) { return TransformerClassifier::kFamily; },
                 [](const ConvEncoderConfig&) { return ConvClassifier::kFamily; },
                 [](const KimEncoderConfig&) { return KimCnn::kFamily; }},
      encoder);
}

std::string ClassifierConfig::describe() const {
  return std::visit(
      overloaded{
          [](const RnnEncoderConfig&) -> std::string { return "self-attentive"; },
          [](const TransformerEncoderConfig&) -> std::string { return "Transformer-encoder"; },
          [this](const auto&) { return heed::describe(encoder); }},
      encoder);
}

// config.json: the shared keys, then each family's encoder as it has always been written (an
// RNN's and a Transformer's keys beside the shared ones, a convolutional encoder's under
// "encoder", with the vocabulary size only at the top)
nlohmann::json ClassifierConfig::to_json() const {
  nlohmann::json j = {{"vocab", vocab()},
                      {"pooling", pooling_name(pooling)},
                      {"attn_dim", attn_dim},
                      {"hops", hops},
                      {"mlp_hidden", mlp_hidden},
                      {"classes", classes},
                      {"dropout", json_number(dropout)},
                      {"penalty", json_number(penalty)},
                      {"word_dropout", json_number(word_dropout)}};
  if (max_norm > 0.f) j["max_norm"] = json_number(max_norm);  // absent: none, as older models
  if (lowercase) j["lowercase"] = true;                       // absent: as written
  if (syntactic_attention) j["syntactic_attention"] = true;   // absent: none
  j["model"] = family();
  std::visit(overloaded{[&](const RnnEncoderConfig& e) {
                          j["cell"] = cell_name(e.cell);
                          j["embed"] = e.embed;
                          j["hidden"] = e.hidden;
                          j["layers"] = e.layers;
                          j["bidirectional"] = e.bidirectional;
                        },
                        [&](const TransformerEncoderConfig& e) {
                          e.layer.to_json(j, "layer_dropout");
                          j["layers"] = e.layers;
                          j["positions"] = name_of(e.positions);
                          j["max_positions"] = e.max_positions;
                        },
                        [&](const auto& e) {
                          auto without_vocab = e;
                          without_vocab.vocab = 0;
                          j["encoder"] = without_vocab.to_json();
                        }},
             encoder);
  return j;
}

void ClassifierConfig::read_shared(const nlohmann::json& j, ClassifierConfig& c) {
  c.set_vocab(j.at("vocab").get<int64_t>());
  c.pooling = parse_pooling(j.at("pooling").get<std::string>());
  c.attn_dim = j.at("attn_dim").get<int64_t>();
  c.hops = j.at("hops").get<int64_t>();
  c.mlp_hidden = j.at("mlp_hidden").get<int64_t>();
  c.classes = j.at("classes").get<int64_t>();
  c.dropout = j.at("dropout").get<float>();
  c.penalty = j.at("penalty").get<float>();
  c.word_dropout = j.value("word_dropout", 0.f);  // absent from older models
  c.max_norm = j.value("max_norm", 0.f);
  c.lowercase = j.value("lowercase", false);
  c.syntactic_attention = j.value("syntactic_attention", false);
}

namespace {

// A family's config from config.json: its encoder (read by `encoder`), then the shared keys.
template <class ReadEncoder>
ClassifierConfig read_classifier(const nlohmann::json& j, ReadEncoder encoder) {
  ClassifierConfig c;
  try {
    c.encoder = encoder(j);
    ClassifierConfig::read_shared(j, c);
  } catch (const nlohmann::json::exception& e) {
    fail("config.json: malformed classifier config (", e.what(), ")");
  }
  return c;
}

// What --dropout, --mlp-hidden, --attn-dim and the pooling's own options set in every family
// (its pooling: `pooling` unless --pooling).
ClassifierConfig shared_options(const ModelOptions& o, Pooling pooling) {
  ClassifierConfig c;
  c.pooling = o.pooling.value_or(pooling);
  if (o.attn_dim) c.attn_dim = *o.attn_dim;
  c.hops = o.hops;
  c.penalty = o.penalty;
  if (o.mlp_hidden) c.mlp_hidden = *o.mlp_hidden;
  if (o.dropout) c.dropout = *o.dropout;
  c.word_dropout = o.word_dropout;
  c.max_norm = o.max_norm;
  c.syntactic_attention = o.syntactic_attention;
  refuse_ctc_options(o, "classifier");
  return c;
}

}  // namespace

ClassifierConfig SelfAttentiveClassifier::configure(const ModelOptions& o) {
  ClassifierConfig c = shared_options(o, Pooling::Attention);
  c.encoder = rnn_encoder(o, std::get<RnnEncoderConfig>(ClassifierConfig{}.encoder));
  return c;
}

ClassifierConfig SelfAttentiveClassifier::from_json(const nlohmann::json& j) {
  return read_classifier(j, [](const nlohmann::json& k) -> EncoderConfig {
    RnnEncoderConfig e;
    e.cell = parse_cell(k.at("cell").get<std::string>());
    e.embed = k.at("embed").get<int64_t>();
    e.hidden = k.at("hidden").get<int64_t>();
    e.layers = k.at("layers").get<int>();
    e.bidirectional = k.at("bidirectional").get<bool>();
    return e;
  });
}

// One dropout rate for the layers and the MLP; pre-LN layers of d 256, 4 heads, ff 512, 2 of
// them, positions up to 512.
ClassifierConfig TransformerClassifier::configure(const ModelOptions& o) {
  ClassifierConfig c = shared_options(o, Pooling::Mean);
  TransformerLayerConfig layer = transformer_layer(
      o, {.d_model = 256, .heads = 4, .ff = 512, .dropout = 0.1f, .norm = NormPlacement::Pre});
  layer.causal_encoder = false;
  c.dropout = layer.dropout;
  c.encoder = TransformerEncoderConfig{.layer = layer,
                                       .layers = o.layers.value_or(2),
                                       .positions = o.positions,
                                       .max_positions = o.max_positions.value_or(512)};
  return c;
}

ClassifierConfig TransformerClassifier::from_json(const nlohmann::json& j) {
  return read_classifier(j, [](const nlohmann::json& k) -> EncoderConfig {
    return TransformerEncoderConfig{
        .layer = TransformerLayerConfig::from_json(k, "layer_dropout"),
        .layers = k.at("layers").get<int64_t>(),
        .positions = parse_name<Positions>(k.at("positions").get<std::string>(), "positions"),
        .max_positions = k.at("max_positions").get<int64_t>()};
  });
}

ClassifierConfig ConvClassifier::configure(const ModelOptions& o) {
  ClassifierConfig c = shared_options(o, Pooling::Max);
  c.encoder = conv_encoder(o, o.embed.value_or(ConvEncoderConfig{}.embed));
  return c;
}

ClassifierConfig ConvClassifier::from_json(const nlohmann::json& j) {
  return read_classifier(j, [](const nlohmann::json& k) -> EncoderConfig {
    return ConvEncoderConfig::from_json(k.at("encoder"));
  });
}

// Kim's classifier: softmax(W c^ + b) with dropout 0.5 on c^, no hidden layer unless
// --mlp-hidden.
ClassifierConfig KimCnn::configure(const ModelOptions& o) {
  ClassifierConfig c = shared_options(o, Pooling::Max);
  c.encoder = kim_encoder(o, o.embed.value_or(KimEncoderConfig{}.embed));
  c.mlp_hidden = o.mlp_hidden.value_or(0);
  c.dropout = o.dropout.value_or(0.5f);
  return c;
}

ClassifierConfig KimCnn::from_json(const nlohmann::json& j) {
  return read_classifier(j, [](const nlohmann::json& k) -> EncoderConfig {
    return KimEncoderConfig::from_json(k.at("encoder"));
  });
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

SentenceClassifier::SentenceClassifier(const ClassifierConfig& c, const Scope& s) : config_(c) {
  check(c.classes >= 2, "classifier: at least 2 classes, got ", c.classes);
  check(std::holds_alternative<TransformerEncoderConfig>(c.encoder) || c.pooling != Pooling::Cls,
        "classifier: --pooling cls is for the Transformer encoder (--model transformer)");
  check(std::holds_alternative<RnnEncoderConfig>(c.encoder) || c.pooling != Pooling::Last,
        "classifier: --pooling last is for the BiLSTM (the Transformer has cls)");
  EncoderConfig encoder = c.encoder;
  if (auto* bilstm = std::get_if<RnnEncoderConfig>(&encoder))
    bilstm->dropout = c.dropout;  // the BiLSTM's inputs and between its layers: the one rate
  encoder_ = make_sequence_encoder(encoder, s);
  if (c.syntactic_attention) encoder_ = wrap_syntactic_attention(std::move(encoder_), s);
  if (c.mlp_hidden > 0) {
    W1_ = &s.param("mlp/W1", {c.mlp_hidden, c.features()}, Init::glorot_uniform());
    b1_ = &s.param("mlp/b1", {c.mlp_hidden}, Init::zeros());
  }
  W2_ = &s.param("mlp/W2", {c.classes, c.mlp_hidden > 0 ? c.mlp_hidden : c.features()},
                 Init::glorot_uniform());
  // Kim 2014: "l2-norms of the weight vectors" of the softmax layer rescaled to s whenever they
  // exceed it after a step -- here the rows of W_2, one per class
  check(c.max_norm >= 0.f && std::isfinite(c.max_norm), "classifier: --max-norm must be >= 0, got ",
        c.max_norm);
  W2_->max_row_norm = c.max_norm;
  b2_ = &s.param("mlp/b2", {c.classes}, Init::zeros());
  if (c.pooling == Pooling::Attention) {
    check(c.hops >= 1, "classifier: --hops must be >= 1, got ", c.hops);
    attention_.emplace_back(c.annotation_dim(), c.attn_dim, c.hops, s / "attention");
  }
}

Var SentenceClassifier::annotations(Graph& g, const ClassifyBatch& b, std::span<const int32_t> ids,
                                    Var* summary, Var* cls_attention, Tensor* tree) const {
  const bool cls = config_.pooling == Pooling::Cls;
  if (!cls) {
    SequenceEncoder::Output e = encoder_->encode(
        g, ids, b.S, b.lengths, {.summary = summary != nullptr, .tree = tree != nullptr});
    if (summary) *summary = e.summary;
    if (tree) *tree = e.tree;
    return e.states;  // [B, S, D]
  }
  // [CLS] w_1 .. w_n: <s> serves as [CLS], put first, [S + 1, B]
  const int64_t B = b.B, S = b.S, T = S + 1;
  auto* with_cls = g.arena().array<int32_t>(static_cast<size_t>(T * B));
  auto* lengths = g.arena().array<int32_t>(static_cast<size_t>(B));
  std::fill(with_cls, with_cls + B, Vocab::kBos);
  std::copy(ids.begin(), ids.end(), with_cls + B);
  for (int64_t n = 0; n < B; ++n) lengths[n] = b.lengths[n] + 1;
  SequenceEncoder::Output e = encoder_->encode(g, {with_cls, static_cast<size_t>(T * B)}, T,
                                               {lengths, static_cast<size_t>(B)},
                                               {.self_attention = cls_attention != nullptr});
  if (cls_attention) {                         // row 0 ([CLS]) over the tokens 1..S, mean of heads
    const Tensor& weights = e.self_attention;  // [B, h, S+1, S+1]
    const int64_t H = weights.shape()[1];
    Tensor a = g.zeros(Shape{B, 1, S});
    for (int64_t n = 0; n < B; ++n)
      for (int64_t k = 0; k < H; ++k)
        for (int64_t t = 0; t < S; ++t)
          a.data()[n * S + t] +=
              weights.data()[((n * H + k) * T) * T + t + 1] / static_cast<float>(H);
    *cls_attention = g.constant(a);
  }
  return e.states;  // [B, S + 1, d]
}

SentenceClassifier::Output SentenceClassifier::forward(Graph& g, const ClassifyBatch& b,
                                                       bool attention) const {
  const int64_t B = b.B, S = b.S, D = config_.annotation_dim();
  std::span<const int32_t> ids = b.ids;  // [S, B]
  std::vector<int32_t> dropped;
  if (g.training() && config_.word_dropout > 0.f) {
    Rng rng(g.next_stream());
    dropped = b.ids;
    for (int32_t& id : dropped)
      if (id != Vocab::kPad && rng.uniform() < config_.word_dropout) id = Vocab::kUnk;
    ids = dropped;
  }
  Output out;
  Var last;  // [B, D]: the encoder's summary, for the last-state baseline
  Var H = annotations(g, b, ids, config_.pooling == Pooling::Last ? &last : nullptr,
                      attention ? &out.A : nullptr,
                      attention && config_.syntactic_attention ? &out.tree : nullptr);
  Var features;  // [B, F]
  switch (config_.pooling) {
    case Pooling::Attention: {
      SelfAttentionPooling::Output p = attention_.front().forward(g, H, b.lengths);
      out.A = p.A;                                          // [B, r, S]
      out.penalty = attention_penalty(g, p.A);              // []
      features = reshape(p.M, Shape{B, config_.hops * D});  // [B, r * D]
      break;
    }
    case Pooling::Max:  // max_t h_t over the real positions (padding at -inf)
      features = max_over_positions(g, H, b.lengths);  // [B, D]
      break;
    case Pooling::Mean:                                 // sum_t h_t / n
      features = mean_over_positions(g, H, b.lengths);  // [B, D]
      break;
    case Pooling::Last:  // [->h_n ; <-h_1]
      features = last;
      break;
    case Pooling::Cls: {  // h_0, the [CLS] position's state: row b (S + 1) of H
      int32_t* rows = g.arena().array<int32_t>(static_cast<size_t>(B));
      for (int64_t n = 0; n < B; ++n) rows[n] = static_cast<int32_t>(n * (S + 1));
      features = embedding(reshape(H, Shape{B * (S + 1), D}),
                           std::span<const int32_t>(rows, static_cast<size_t>(B)), Shape{B});
      break;
    }
  }
  // the MLP classifier, or without its hidden layer a linear one (Kim 2014)
  Var hidden = features;  // [B, F]
  if (W1_) hidden = relu(linear(dropout(features, config_.dropout), g.param(*W1_), g.param(*b1_)));
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
