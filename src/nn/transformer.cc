// The Transformer's layers (see the header for the equations).
// Leaves out: the model around them (models/transformer_seq2seq.cc).
#include "heed/nn/transformer.h"

#include <algorithm>
#include <cmath>

#include "heed/util/error.h"
#include "heed/util/json.h"
#include "heed/util/memory.h"

namespace heed {

std::span<const Named<NormPlacement>> names(NormPlacement) {
  static constexpr Named<NormPlacement> kNames[] = {{NormPlacement::Pre, "pre"},
                                                    {NormPlacement::Post, "post"}};
  return kNames;
}

std::span<const Named<FfnActivation>> names(FfnActivation) {
  static constexpr Named<FfnActivation> kNames[] = {{FfnActivation::Relu, "relu"},
                                                    {FfnActivation::Gelu, "gelu"}};
  return kNames;
}

std::span<const Named<Positions>> names(Positions) {
  static constexpr Named<Positions> kNames[] = {{Positions::Sinusoidal, "sinusoidal"},
                                                {Positions::Learned, "learned"}};
  return kNames;
}

void TransformerLayerConfig::to_json(nlohmann::json& j, const char* dropout_key) const {
  j["d_model"] = d_model;
  j["heads"] = heads;
  j["ff"] = ff;
  j[dropout_key] = json_number(dropout);
  j["norm"] = name_of(norm);
  j["activation"] = name_of(activation);
  if (causal_encoder) j["causal_encoder"] = true;
  if (encoder_chunk > 0) {
    j["encoder_chunk"] = encoder_chunk;
    j["left_chunks"] = left_chunks;
    j["lookahead"] = lookahead;
  }
  if (wait_k > 0) j["wait_k"] = wait_k;
  if (layer_norm_eps != 1e-5f) j["layer_norm_eps"] = json_number(layer_norm_eps);  // imported
  if (monotonic) {
    j["cross_attention"] = monotonic->chunk > 0 ? "mocha" : "monotonic";
    if (monotonic->chunk > 0) j["chunk"] = monotonic->chunk;
    j["monotonic_bias"] = json_number(monotonic->bias);
    j["monotonic_noise"] = json_number(monotonic->noise);
    if (monotonic->head_drop > 0.f) j["monotonic_head_drop"] = json_number(monotonic->head_drop);
    if (monotonic->layers > 0) j["monotonic_layers"] = monotonic->layers;
    if (monotonic->shared) j["monotonic_policy"] = "shared";
    monotonic->latency.to_json(j);
  }
}

TransformerLayerConfig TransformerLayerConfig::from_json(const nlohmann::json& j,
                                                         const char* dropout_key) {
  TransformerLayerConfig c;
  c.d_model = j.at("d_model").get<int64_t>();
  c.heads = j.at("heads").get<int64_t>();
  c.ff = j.at("ff").get<int64_t>();
  c.dropout = j.at(dropout_key).get<float>();
  c.norm = parse_name<NormPlacement>(j.at("norm").get<std::string>(), "norm");
  c.activation = parse_name<FfnActivation>(j.at("activation").get<std::string>(), "activation");
  c.causal_encoder = j.value("causal_encoder", false);
  c.encoder_chunk = j.value("encoder_chunk", int64_t{0});
  c.left_chunks = j.value("left_chunks", int64_t{0});
  c.lookahead = j.value("lookahead", int64_t{0});
  check(c.encoder_chunk >= 0 && c.left_chunks >= 0 && c.lookahead >= 0,
        "config.json: encoder_chunk ", c.encoder_chunk, ", left_chunks ", c.left_chunks,
        " and lookahead ", c.lookahead, " must be >= 0");
  check(c.encoder_chunk == 0 || !c.causal_encoder,
        "config.json: a chunked encoder (encoder_chunk) is not also causal_encoder");
  c.wait_k = j.value("wait_k", int64_t{0});
  c.layer_norm_eps = j.value("layer_norm_eps", 1e-5f);
  check(c.layer_norm_eps > 0.f && c.layer_norm_eps < 1.f, "config.json: layer_norm_eps ",
        c.layer_norm_eps, " is not in (0, 1)");
  check(c.wait_k >= 0, "config.json: wait_k is ", c.wait_k, " (0: off)");
  const auto cross = j.value("cross_attention", std::string("soft"));
  check(cross == "soft" || cross == "monotonic" || cross == "mocha",
        "config.json: cross_attention is \"", cross, "\" (soft, monotonic or mocha)");
  if (cross != "soft") {
    const auto policy = j.value("monotonic_policy", std::string("heads"));
    check(policy == "heads" || policy == "shared", "config.json: monotonic_policy is \"", policy,
          "\" (heads or shared)");
    c.monotonic = MonotonicHeadsConfig{.chunk = cross == "mocha" ? j.at("chunk").get<int64_t>() : 0,
                                       .bias = j.at("monotonic_bias").get<float>(),
                                       .noise = j.at("monotonic_noise").get<float>(),
                                       .head_drop = j.value("monotonic_head_drop", 0.f),
                                       .layers = j.value("monotonic_layers", int64_t{0}),
                                       .shared = policy == "shared",
                                       .latency = LatencyLoss::from_json(j)};
    check(cross == "monotonic" || c.monotonic->chunk >= 1, "config.json: mocha's chunk is ",
          c.monotonic->chunk, " (at least 1)");
    check(c.wait_k == 0, "config.json: wait_k with monotonic cross-attention");
    check(c.monotonic->layers >= 0, "config.json: monotonic_layers is ", c.monotonic->layers,
          " (0: every decoder layer)");
  }
  return c;
}

Tensor sinusoidal_positions(int64_t positions, int64_t d) {
  Tensor pe = Tensor::empty({positions, d});
  for (int64_t pos = 0; pos < positions; ++pos)
    for (int64_t i = 0; i < d; i += 2) {
      // the angle pos / 10000^{2i/d} (i here is the even column 2i of the paper)
      const double angle = static_cast<double>(pos) / std::pow(10000.0, static_cast<double>(i) / d);
      pe.data()[pos * d + i] = static_cast<float>(std::sin(angle));
      if (i + 1 < d) pe.data()[pos * d + i + 1] = static_cast<float>(std::cos(angle));
    }
  return pe;
}

PositionalEmbedding::PositionalEmbedding(int64_t d, int64_t max_positions, Positions positions,
                                         float dropout, const Scope& scope)
    : d_(d), max_positions_(max_positions), dropout_(dropout) {
  check(max_positions >= 1 && d >= 1, "transformer: max_positions ", max_positions, " and d_model ",
        d, " must be at least 1");
  check_memory(4.0 * static_cast<double>(max_positions) * static_cast<double>(d),
               "transformer: a position table of max_positions " + std::to_string(max_positions) +
                   " x d_model " + std::to_string(d));
  if (positions == Positions::Learned)
    learned_ = &scope.param("positions", {max_positions, d}, Init::normal(0.02f));
  else
    sinusoid_ = sinusoidal_positions(max_positions, d);
}

Var PositionalEmbedding::forward(Graph& g, const Parameter& table, std::span<const int32_t> ids,
                                 std::span<const int32_t> positions) const {
  const Shape n{static_cast<int64_t>(ids.size())};
  return forward(embedding(g.param(const_cast<Parameter&>(table)), ids, n),
                 positions);  // E[w_i]  [N, d]
}

Var PositionalEmbedding::forward(Var x, std::span<const int32_t> positions) const {
  Graph& g = x.graph();
  check(x.dim(0) == static_cast<int64_t>(positions.size()) && x.dim(1) == d_,
        "transformer: inputs of shape ", x.shape().str(), " for ", positions.size(),
        " positions of d ", d_);
  for (int32_t p : positions)
    check(p < max_positions_, "transformer: position ", p, " beyond --max-positions ",
          max_positions_);
  Var pe = embedding(
      learned_ ? g.param(*learned_)
               : g.constant(Tensor::view(const_cast<float*>(sinusoid_.data()), sinusoid_.shape())),
      positions, Shape{x.dim(0)});  // P[pos_i]  [N, d]
  return dropout(x * std::sqrt(static_cast<float>(d_)) + pe, dropout_);
}

FeedForward::FeedForward(const TransformerLayerConfig& c, const Scope& scope)
    : activation_(c.activation), dropout_(c.dropout) {
  W1_ = &scope.param("W1", {c.ff, c.d_model}, Init::glorot_uniform());
  b1_ = &scope.param("b1", {c.ff}, Init::zeros());
  W2_ = &scope.param("W2", {c.d_model, c.ff}, Init::glorot_uniform());
  b2_ = &scope.param("b2", {c.d_model}, Init::zeros());
}

Var FeedForward::forward(Var x) const {
  Graph& g = x.graph();
  Var h = linear(x, g.param(*W1_), g.param(*b1_));  // x W_1 + b_1  [..., ff]
  h = activation_ == FfnActivation::Relu ? relu(h) : gelu(h);
  return linear(dropout(h, dropout_), g.param(*W2_), g.param(*b2_));  // [..., d]
}

LayerNorm::LayerNorm(int64_t d, const Scope& scope, float eps)
    : gamma_(&scope.param("gamma", {d}, Init::ones())),
      beta_(&scope.param("beta", {d}, Init::zeros())),
      eps_(eps) {}

Var LayerNorm::forward(Var x) const {
  Graph& g = x.graph();
  return layer_norm(x, g.param(*gamma_), g.param(*beta_), eps_);
}

Residual::Residual(const TransformerLayerConfig& c, const Scope& scope)
    : norm_(c.norm), dropout_(c.dropout), ln_(c.d_model, scope / "ln", c.layer_norm_eps) {}

TransformerEncoderLayer::TransformerEncoderLayer(const TransformerLayerConfig& c,
                                                 const Scope& scope, bool first)
    : causal_(c.causal_encoder),
      window_{.chunk = c.encoder_chunk,
              .left = c.left_chunks * c.encoder_chunk,
              .right = first && c.encoder_chunk > 0 ? c.lookahead : 0},
      self_(c.d_model, c.heads, true, scope / "self_attn"),
      ff_(c, scope / "ffn"),
      r_self_(c, scope / "self_attn"),
      r_ff_(c, scope / "ffn") {}

Var TransformerEncoderLayer::forward(Var x, const Packing& p, Tensor* weights) const {
  x = r_self_(x, [&](Var h) { return self_.self(h, p, causal_, weights, window_); });
  return r_ff_(x, [&](Var h) { return ff_.forward(h); });
}

Var TransformerEncoderLayer::chunk_step(Var x, int64_t ahead, KvWindow& window) const {
  check(window_.chunk > 0, "transformer encoder: a chunk at a time needs a chunked encoder");
  Var kept = ahead > 0 ? slice(x, 0, 0, x.dim(0) - ahead) : x;  // the chunk's own rows
  x = r_self_(x, kept, [&](Var h) { return self_.self_chunk(h, ahead, window, window_.left); });
  return r_ff_(x, [&](Var h) { return ff_.forward(h); });
}

Var TransformerEncoderLayer::step(Var x, KvCache& cache) const {
  check(causal_, "transformer encoder: one position at a time needs a causal encoder");
  x = r_self_(x, [&](Var h) { return self_.self_step(h, cache); });
  return r_ff_(x, [&](Var h) { return ff_.forward(h); });
}

TransformerDecoderLayer::TransformerDecoderLayer(const TransformerLayerConfig& c,
                                                 const Scope& scope, bool attends, bool follows)
    : self_(c.d_model, c.heads, true, scope / "self_attn"),
      cross_(c.monotonic || !attends ? std::nullopt
                                     : std::make_optional<MultiHeadAttention>(
                                           c.d_model, c.heads, false, scope / "cross_attn")),
      monotonic_(c.monotonic && attends
                     ? std::make_optional<MonotonicMultiHeadAttention>(
                           c.d_model, c.heads, *c.monotonic, scope / "cross_attn", follows)
                     : std::nullopt),
      ff_(c, scope / "ffn"),
      r_self_(c, scope / "self_attn"),
      r_cross_(attends ? std::make_optional<Residual>(c, scope / "cross_attn") : std::nullopt),
      r_ff_(c, scope / "ffn") {}

Var TransformerDecoderLayer::project_memory(Var memory, const Packing& src) const {
  if (!attends()) return {};
  return monotonic_ ? monotonic_->project_memory(memory, src) : cross_->project_memory(memory, src);
}

Tensor TransformerDecoderLayer::transpose_memory_keys(Graph& g, Var memory_kv) const {
  if (!attends() || monotonic_) return {};
  return cross_->transpose_memory_keys(g, memory_kv);
}

Var TransformerDecoderLayer::forward(Var y, const Packing& tgt, Var memory_kv,
                                     std::span<const int32_t> src_lengths, int64_t wait_k,
                                     Var* delays, Var* policy) const {
  y = r_self_(y, [&](Var h) { return self_.self(h, tgt, /*causal=*/true); });
  if (!attends()) {
    // no cross-attention sub-layer
  } else if (monotonic_) {
    check(wait_k == 0, "transformer: wait-k with monotonic cross-attention");
    y = (*r_cross_)(y, [&](Var h) {
      return monotonic_->cross(h, tgt, memory_kv, src_lengths, delays, policy);
    });
  } else {
    // wait-k: output i sees source positions j <= i + k - 1
    const std::optional<int64_t> prefix =
        wait_k > 0 ? std::optional<int64_t>(wait_k - 1) : std::nullopt;
    y = (*r_cross_)(
        y, [&](Var h) { return cross_->cross(h, tgt, memory_kv, src_lengths, nullptr, prefix); });
  }
  return r_ff_(y, [&](Var h) { return ff_.forward(h); });
}

Var TransformerDecoderLayer::step(Var y, Var memory_kv, std::span<const int32_t> src_lengths,
                                  KvCache& cache, MonotonicHeadsState* heads, int64_t wait_k,
                                  Tensor* weights, int64_t rows_per_memory,
                                  const float* memory_keys_t) const {
  const int64_t K = rows_per_memory, M = static_cast<int64_t>(src_lengths.size());
  check(K >= 1 && y.dim(0) == M * K, "transformer decoder step: ", y.dim(0), " rows for ", M,
        " memory rows of ", K);
  check(K == 1 || (wait_k == 0 && !monotonic_),
        "transformer decoder step: rows share a memory row under soft attention only");
  // the K rows of memory row r are its K queries: packed and padded [M, K, d] coincide
  const Packing queries = equal_lengths(y.graph(), M, K);
  // wait-k: this output, at position t = cache.t, sees source positions j <= t + k - 1
  const std::optional<int64_t> prefix =
      wait_k > 0 ? std::optional<int64_t>(cache.t + wait_k - 1) : std::nullopt;
  y = r_self_(y, [&](Var h) { return self_.self_step(h, cache); });
  check(attends() || weights == nullptr,
        "transformer: this decoder layer has no cross-attention to report");
  if (attends())
    y = (*r_cross_)(y, [&](Var h) {
      if (monotonic_) {
        check(heads != nullptr, "transformer: monotonic cross-attention decodes with a state");
        return monotonic_->step(h, memory_kv, src_lengths, *heads, weights);
      }
      return cross_->cross(h, queries, memory_kv, src_lengths, weights, prefix, memory_keys_t);
    });
  return r_ff_(y, [&](Var h) { return ff_.forward(h); });
}

TransformerEncoder::TransformerEncoder(const TransformerLayerConfig& c, int64_t layers,
                                       const Scope& scope) {
  check(layers >= 1, "transformer encoder: ", layers, " layers");
  layers_.reserve(layers);
  for (int64_t i = 0; i < layers; ++i)
    layers_.emplace_back(c, scope / ("layer_" + std::to_string(i)), i == 0);
  if (c.norm == NormPlacement::Pre)
    final_.emplace_back(c.d_model, scope / "final_ln", c.layer_norm_eps);
  chunk_ = c.encoder_chunk;
}

Var TransformerEncoder::forward(Var x, const Packing& p, Tensor* last_weights) const {
  // Inference: the encoder runs in one layer's memory, each layer on the pages the one before
  // used (a decoded batch's graph touches fewer fresh pages, and those it reuses are warm)
  Graph& g = x.graph();
  const Graph::Mark start = g.mark();
  for (size_t l = 0; l < layers_.size(); ++l) {
    const bool last = l + 1 == layers_.size();
    x = layers_[l].forward(x, p, last ? last_weights : nullptr);
    if (!g.training() && !last) g.rewind(start, {&x});
  }
  return final_.empty() ? x : final_.front().forward(x);
}

Var TransformerEncoder::step(Var x, std::span<KvCache> caches) const {
  check(caches.size() == layers_.size(), "transformer encoder: ", caches.size(), " caches for ",
        layers_.size(), " layers");
  for (size_t l = 0; l < layers_.size(); ++l) x = layers_[l].step(x, caches[l]);
  return final_.empty() ? x : final_.front().forward(x);
}

TransformerEncoder::Stream TransformerEncoder::stream() const {
  check(
      chunk_ > 0,
      "transformer encoder: a stream needs a chunked encoder (--encoder-chunk), whose positions do "
      "not depend on those past their chunk and lookahead");
  return Stream(*this);
}

TransformerEncoder::Stream::Stream(const TransformerEncoder& encoder)
    : e_(encoder), d_(0), windows_(encoder.layers_.size()) {}

Var TransformerEncoder::Stream::push(Graph& g, Var x) {
  d_ = x.dim(x.shape().rank() - 1);
  const float* v = x.value().data();
  pending_.insert(pending_.end(), v, v + x.value().numel());
  return drain(g, false);
}

Var TransformerEncoder::Stream::finish(Graph& g) {
  return drain(g, true);
}

// Chunk after chunk while its positions and the lookahead are there (at the end: while any
// position is), their states [m, d] stacked.
Var TransformerEncoder::Stream::drain(Graph& g, bool end) {
  const int64_t C = e_.chunk_, N = e_.layers_.front().lookahead();
  std::vector<Var> out;
  while (d_ > 0) {
    const int64_t rows = static_cast<int64_t>(pending_.size()) / d_;
    if (rows == 0 || (!end && rows < C + N)) break;
    const int64_t n = std::min(C, rows);
    out.push_back(run(g, n, std::min(N, rows - n)));
  }
  if (out.empty()) return {};
  return out.size() == 1 ? out.front() : concat(out, 0);
}

Var TransformerEncoder::Stream::run(Graph& g, int64_t rows, int64_t ahead) {
  Var x =
      g.input(Shape{rows + ahead, d_},
              std::span<const float>(pending_.data(), static_cast<size_t>((rows + ahead) * d_)));
  pending_.erase(pending_.begin(), pending_.begin() + rows * d_);
  for (size_t l = 0; l < e_.layers_.size(); ++l)
    x = e_.layers_[l].chunk_step(x, l == 0 ? ahead : 0, windows_[l]);  // [rows, d]
  return e_.final_.empty() ? x : e_.final_.front().forward(x);
}

}  // namespace heed
