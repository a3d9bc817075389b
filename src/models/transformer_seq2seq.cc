// The Transformer encoder-decoder (see the header).
// Leaves out: beam search (decode/) and the trainer (train/).
#include "heed/models/transformer_seq2seq.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "heed/autograd/ops.h"
#include "heed/data/vocab.h"
#include "heed/kernels/layout.h"
#include "heed/kernels/tile_gemm.h"
#include "heed/models/model_options.h"
#include "heed/util/error.h"
#include "heed/util/json.h"

namespace heed {

nlohmann::json TransformerSeq2SeqConfig::to_json() const {
  nlohmann::json j = {{"model", kFamily}, {"src_vocab", src_vocab}, {"tgt_vocab", tgt_vocab}};
  layer.to_json(j);
  j["enc_layers"] = enc_layers;
  j["dec_layers"] = dec_layers;
  j["positions"] = name_of(positions);
  j["max_positions"] = max_positions;
  j["tie_output"] = tie_output;
  j["share_embeddings"] = share_embeddings;
  if (audio) j["audio"] = audio->to_json();
  if (ctc_weight > 0) j["ctc_weight"] = json_number(ctc_weight);
  if (ctc_decode_weight >= 0) j["ctc_decode_weight"] = json_number(ctc_decode_weight);
  return j;
}

// 3+3 post-LN layers of d 256, 8 heads, ff 1024, tied output; --attention monotonic | mocha
// makes the cross-attention monotonic multihead attention (Ma et al. 2020).
TransformerSeq2SeqConfig TransformerSeq2SeqConfig::configure(const ModelOptions& o) {
  refuse_syntactic_attention(o, kFamily);
  refuse_ctc_options(o, kFamily);
  TransformerSeq2SeqConfig c;
  c.layer = transformer_layer(o, c.layer);
  c.layer.wait_k = o.wait_k;
  check(o.wait_k_chunk == 0,
        "--wait-k-chunk is for the rnn family's speech models; a transformer reads tokens");
  c.positions = o.positions;
  c.max_positions = o.max_positions.value_or(c.max_positions);
  c.enc_layers = o.layers.value_or(3);
  c.dec_layers = o.dec_layers.value_or(c.enc_layers);
  c.tie_output = !o.untied_output;
  c.share_embeddings = o.share_embeddings;
  c.ctc_weight = o.ctc_weight;
  if (o.attention) {
    const AttentionKind a = *o.attention;
    check(a == AttentionKind::Monotonic || a == AttentionKind::Mocha, "--attention ",
          attention_name(a),
          ": a transformer's cross-attention is multi-head (the default), or monotonic | mocha "
          "in every head (Ma et al. 2020)");
    check(o.wait_k == 0,
          "--wait-k and --attention monotonic|mocha are two read/write policies: give one");
    c.layer.monotonic =
        MonotonicHeadsConfig{.chunk = a == AttentionKind::Mocha ? o.monotonic_attention.chunk : 0,
                             .bias = o.monotonic_attention.bias,
                             .noise = o.monotonic_attention.noise,
                             .head_drop = o.head_drop,
                             .layers = o.monotonic_layers,
                             .shared = o.monotonic_policy == MonotonicPolicy::Shared,
                             .latency = latency_loss(o)};
  }
  check_monotonic_options(o, c.layer.monotonic.has_value(), /*heads=*/true);
  check(c.first_attending() >= 0, "--monotonic-layers ", o.monotonic_layers, ": the decoder has ",
        c.dec_layers, " layers");
  return c;
}

TransformerSeq2SeqConfig TransformerSeq2SeqConfig::from_json(const nlohmann::json& j) {
  TransformerSeq2SeqConfig c;
  try {
    c.src_vocab = j.at("src_vocab").get<int64_t>();
    c.tgt_vocab = j.at("tgt_vocab").get<int64_t>();
    c.layer = TransformerLayerConfig::from_json(j);
    c.enc_layers = j.at("enc_layers").get<int64_t>();
    c.dec_layers = j.at("dec_layers").get<int64_t>();
    c.positions = parse_name<Positions>(j.at("positions").get<std::string>(), "positions");
    c.max_positions = j.at("max_positions").get<int64_t>();
    c.tie_output = j.at("tie_output").get<bool>();
    c.share_embeddings = j.at("share_embeddings").get<bool>();
    if (j.contains("audio")) c.audio = AudioFrontEndConfig::from_json(j.at("audio"));
    c.ctc_weight = j.value("ctc_weight", 0.f);
    c.ctc_decode_weight = j.value("ctc_decode_weight", -1.f);
  } catch (const nlohmann::json::exception& e) {
    fail("config.json: malformed transformer model config (", e.what(), ")");
  }
  return c;
}

int64_t TransformerSeq2SeqConfig::first_attending() const {
  return layer.monotonic && layer.monotonic->layers > 0 ? dec_layers - layer.monotonic->layers : 0;
}

OnlinePolicy TransformerSeq2SeqConfig::online_policy() const {
  if (!layer.causal_encoder)
    return {.reason =
                "an encoder whose every state sees the whole source (train with "
                "--causal-encoder to decode online)"};
  if (layer.wait_k > 0) return {.kind = OnlinePolicy::Kind::WaitK, .k = layer.wait_k, .reason = ""};
  if (layer.monotonic) return {.kind = OnlinePolicy::Kind::Monotonic, .k = 0, .reason = ""};
  return {.reason =
              "cross-attention over the whole source (train with --wait-k K or --attention "
              "monotonic|mocha to decode online)"};
}

std::string TransformerSeq2SeqConfig::describe() const {
  return "transformer " + std::to_string(enc_layers) + "+" + std::to_string(dec_layers) +
         " layers, d " + std::to_string(layer.d_model) + ", " + std::to_string(layer.heads) +
         " heads, ff " + std::to_string(layer.ff) +
         (layer.causal_encoder ? ", causal encoder" : "") +
         (layer.wait_k > 0 ? ", wait-" + std::to_string(layer.wait_k) : "") +
         (!layer.monotonic ? ""
          : layer.monotonic->chunk == 0
              ? ", monotonic heads"
              : ", mocha heads w " + std::to_string(layer.monotonic->chunk)) +
         (layer.monotonic && layer.monotonic->shared ? " on one shared policy" : "") +
         (layer.monotonic && layer.monotonic->layers > 0
              ? " in the top " + std::to_string(layer.monotonic->layers) + " decoder layers"
              : "") +
         (audio ? ", " + audio->describe() : "") +
         (ctc_weight > 0 ? ", joint CTC " + nlohmann::json(json_number(ctc_weight)).dump() : "");
}

void TransformerSeq2SeqConfig::set_vocabularies(int64_t src, int64_t tgt) {
  if (!audio) src_vocab = src;
  tgt_vocab = tgt;
}

void TransformerSeq2SeqConfig::set_audio(const AudioFrontEndConfig& front) {
  check(!share_embeddings, "transformer: a speech recognizer has no source table to share");
  check(layer.wait_k == 0 && !layer.monotonic && !layer.causal_encoder,
        "transformer: a speech recognizer reads its whole utterance (no --wait-k, monotonic "
        "heads or --causal-encoder yet)");
  src_vocab = 0;  // no table: the front end's vectors, d_model wide
  audio = front;
  audio->dim = layer.d_model;
}

TransformerSeq2Seq::TransformerSeq2Seq(const TransformerSeq2SeqConfig& c, const Scope& scope)
    : config_(c), encoder_(c.layer, c.enc_layers, scope / "encoder") {
  const int64_t d = c.layer.d_model;
  check((c.src_vocab > 0 || c.audio) && c.tgt_vocab > 0, "transformer: empty vocabulary");
  check(c.first_attending() >= 0, "transformer: monotonic heads in ",
        c.layer.monotonic ? c.layer.monotonic->layers : 0, " of ", c.dec_layers, " decoder layers");
  check(!c.share_embeddings || c.src_vocab == c.tgt_vocab,
        "transformer: shared embeddings need one vocabulary (", c.src_vocab, " vs ", c.tgt_vocab,
        ")");
  // N(0, d^-1/2), scaled up by sqrt(d) by PositionalEmbedding: unit-variance inputs (as fairseq)
  const Init emb = Init::normal(1.f / std::sqrt(static_cast<float>(d)));
  // A table read only by lookups gets row-sparse gradients; one that is also the (tied) output
  // matrix gets a dense gradient from it.
  const bool src_dense = c.share_embeddings && c.tie_output;
  if (c.audio)
    front_ = std::make_unique<AudioFrontEnd>(*c.audio, scope);
  else
    src_embed_ = &scope.param("src_embed", {c.src_vocab, d}, emb, /*row_sparse=*/!src_dense);
  tgt_embed_ = c.share_embeddings
                   ? src_embed_
                   : &scope.param("tgt_embed", {c.tgt_vocab, d}, emb, /*row_sparse=*/!c.tie_output);
  positions_.emplace(d, c.max_positions, c.positions, c.layer.dropout, scope);
  if (!c.tie_output) out_W_ = &scope.param("out/W", {c.tgt_vocab, d}, Init::glorot_uniform());
  out_b_ = &scope.param("out/b", {c.tgt_vocab}, Init::zeros());
  (c.tie_output ? tgt_embed_ : out_W_)->argmax_read = true;  // greedy search's Scores::Argmax
  Scope dec = scope / "decoder";
  decoder_.reserve(c.dec_layers);
  // the shared policy (MonotonicHeadsConfig::shared) in the lowest attending layer; the layers
  // above follow it
  const int64_t first = c.first_attending();
  const bool shared = c.layer.monotonic && c.layer.monotonic->shared;
  for (int64_t i = 0; i < c.dec_layers; ++i)
    decoder_.emplace_back(c.layer, dec / ("layer_" + std::to_string(i)), i >= first,
                          shared && i > first);
  if (c.layer.norm == NormPlacement::Pre)
    dec_final_.emplace_back(d, dec / "final_ln", c.layer.layer_norm_eps);
  check(c.ctc_weight >= 0.f && c.ctc_weight < 1.f && c.ctc_decode_weight <= 1.f,
        "transformer: the CTC weight lambda is in [0, 1), got ", c.ctc_weight);
  check(c.ctc_decode_weight <= 0.f || c.ctc_weight > 0.f,
        "transformer: joint CTC-attention decoding needs a model trained with --ctc-weight");
  if (c.ctc_weight > 0) ctc_.emplace(d, c.tgt_vocab, scope);  // on the memory
}

Var TransformerSeq2Seq::output(Var h) const {
  Graph& g = h.graph();
  return linear(h, g.param(config_.tie_output ? *tgt_embed_ : *out_W_), g.param(*out_b_));
}

Var TransformerSeq2Seq::encode(Graph& g, std::span<const int32_t> src, const Packing& p) const {
  check(src_embed_ != nullptr, "transformer: this recognizer reads audio (frames), not token ids");
  const PackedIds in = pack_ids(g, src, p);
  Var x = positions_->forward(g, *src_embed_, in.ids, in.positions);  // [N_s, d]
  return encoder_.forward(x, p);
}

std::pair<Var, Packing> TransformerSeq2Seq::encode(Graph& g, const Seq2SeqBatch& b) const {
  if (b.F == 0) {
    const Packing p = make_packing(g, b.src_lengths, b.S);
    return {encode(g, b.src, p), p};
  }
  check(front_ != nullptr, "transformer: this model reads token ids, not audio");
  check(b.F == front_->config().features, "transformer: frames of ", b.F, " bins for a model of ",
        front_->config().features);
  // the front end's 40 ms vectors [B, S', d], packed, at positions 0, 1, ... of each utterance
  const auto n = static_cast<size_t>(b.B);
  int32_t* frames = g.arena().array<int32_t>(n);
  Var x = front_->forward_batch_major(g, b.features, b.S, b.src_lengths, {frames, n});
  const Packing p = make_packing(g, {frames, n}, x.dim(1));
  auto* pos = g.arena().array<int32_t>(static_cast<size_t>(p.N));
  for (int64_t r = 0, k = 0; r < p.B(); ++r)
    for (int32_t t = 0; t < p.lengths[static_cast<size_t>(r)]; ++t) pos[k++] = t;
  x = positions_->forward(pack(x, p), {pos, static_cast<size_t>(p.N)});  // [N_s, d]
  return {encoder_.forward(x, p), p};
}

Var TransformerSeq2Seq::decode(Graph& g, std::span<const int32_t> tgt_in, const Packing& tgt,
                               Var memory, const Packing& src, int64_t wait_k,
                               std::vector<Var>* delays) const {
  const PackedIds in = pack_ids(g, tgt_in, tgt);
  Var y = positions_->forward(g, *tgt_embed_, in.ids, in.positions);  // [N_t, d]
  Var policy;  // the shared policy's alignment [B, T, S], from its layer to those above
  for (const auto& layer : decoder_) {
    Var d;
    y = layer.forward(y, tgt, layer.project_memory(memory, src), src.lengths, wait_k,
                      delays ? &d : nullptr, &policy);
    if (delays && d.valid()) delays->push_back(d);  // [B, h, T] ([B, 1, T]: the shared policy)
  }
  if (!dec_final_.empty()) y = dec_final_.front().forward(y);
  return y;  // [N_t, d]: the output layer's input
}

Var TransformerSeq2Seq::loss(Graph& g, const Seq2SeqBatch& b, float label_smoothing) const {
  const auto [memory, src] = encode(g, b);  // [N_s, d]
  const Packing tgt = make_packing(g, target_lengths(b), b.T);
  check(b.wait_k == 0 || config_.layer.wait_k > 0, "transformer: a batch at wait-", b.wait_k,
        " for a model trained without --wait-k");
  // monotonic heads trained against their latency: lambda_avg L_avg + lambda_var L_var (a
  // training term: validation's loss stays the cross-entropy)
  const auto& mono = config_.layer.monotonic;
  const LatencyLoss terms = mono ? mono->latency.at_step(b.step) : LatencyLoss{};  // its warm-up
  const bool latency = terms.trains() && g.training();
  std::vector<Var> delays;  // per decoder layer [B, h, T]
  Var h = decode(g, b.tgt_in, tgt, memory, src, b.wait_k > 0 ? b.wait_k : config_.layer.wait_k,
                 latency ? &delays : nullptr);  // [N_t, d]
  // the output layer and its loss fused over chunks of rows: no [N_t, V] logits held
  Var ce = linear_cross_entropy(h, g.param(config_.tie_output ? *tgt_embed_ : *out_W_),
                                g.param(*out_b_), pack_ids(g, b.tgt_out, tgt).ids,
                                {.ignore_index = Vocab::kPad, .label_smoothing = label_smoothing});
  if (latency) return ce + monotonic_latency_loss(delays, tgt.lengths, terms);
  const float lambda = config_.ctc_weight;  // joint CTC-attention: lambda CTC + (1 - lambda) CE
  if (lambda <= 0) return ce;
  Var ctc = ctc_->loss(b, unpack(memory, src), src.lengths, config_.layer.dropout);
  return affine(ce, 1.f - lambda, 0.f) + affine(ctc, lambda, 0.f);
}

TransformerSeq2Seq::DecoderState TransformerSeq2Seq::start(Graph& g, std::span<const int32_t> src,
                                                           int64_t S,
                                                           std::span<const int32_t> lengths,
                                                           int64_t max_len,
                                                           int64_t rows_per_source) const {
  const Packing p = make_packing(g, lengths, S);
  return start_encoded(g, encode(g, src, p), p, max_len, rows_per_source);
}

TransformerSeq2Seq::DecoderState TransformerSeq2Seq::start(Graph& g, const Seq2SeqBatch& b,
                                                           int64_t max_len,
                                                           int64_t rows_per_source) const {
  const auto [memory, p] = encode(g, b);
  return start_encoded(g, memory, p, max_len, rows_per_source);
}

TransformerSeq2Seq::DecoderState TransformerSeq2Seq::start_encoded(Graph& g, Var memory,
                                                                   const Packing& p,
                                                                   int64_t max_len,
                                                                   int64_t rows_per_source) const {
  const int64_t k = rows_per_source, B = p.B() * k;
  DecoderState st;
  st.src_lengths = repeat_rows(g, p.lengths, k);  // [B]
  st.memory = memory;                             // [N_s, d], each source once
  st.packing = p;
  // a source's rows share its memory, unless the cross-attention keeps a state per row
  st.rows_per_memory = config_.layer.monotonic || config_.layer.wait_k > 0 ? 1 : k;
  st.memory_lengths = st.rows_per_memory == 1 ? st.src_lengths : p.lengths;
  for (const auto& layer : decoder_) {
    // [B / rows_per_memory, S, 2d]; none for a layer that does not attend
    st.memory_kv.push_back(!layer.attends() ? Var{}
                           : st.rows_per_memory == 1
                               ? repeat_rows(layer.project_memory(memory, p), k)
                               : layer.project_memory(memory, p));
    if (st.rows_per_memory >= kernels::kAbtTransposeRows)
      st.memory_keys_t.push_back(st.memory_kv.back().valid()
                                     ? layer.transpose_memory_keys(g, st.memory_kv.back())
                                     : Tensor{});
    st.caches.push_back(layer.make_cache(g, B, max_len));
    // one per layer (no heads in a layer that does not attend)
    if (config_.layer.monotonic)
      st.heads.push_back(layer.monotonic() ? layer.make_heads_state(B) : MonotonicHeadsState{});
  }
  return st;
}

std::vector<Var> TransformerSeq2Seq::encode_position(Graph& g, std::span<const int32_t> ids,
                                                     int64_t position,
                                                     std::span<KvCache> encoder_caches) const {
  const auto B = static_cast<int64_t>(ids.size());
  int32_t* pos = g.arena().array<int32_t>(static_cast<size_t>(B));
  std::fill(pos, pos + B, static_cast<int32_t>(position));
  Var x = positions_->forward(g, *src_embed_, ids, {pos, static_cast<size_t>(B)});  // [B, d]
  x = encoder_.step(x, encoder_caches);  // the memory at `position`  [B, d]
  const Packing one = single_positions(g, B);
  std::vector<Var> rows;
  for (const auto& layer : decoder_) rows.push_back(layer.project_memory(x, one));  // [B, 1, w]
  return rows;
}

TransformerSeq2Seq::Step TransformerSeq2Seq::step(Graph& g, std::span<const int32_t> prev,
                                                  DecoderState& st, Scores scores,
                                                  int attention_layer, int64_t best_k) const {
  const auto B = static_cast<int64_t>(prev.size());
  int32_t* pos = g.arena().array<int32_t>(static_cast<size_t>(B));
  std::fill(pos, pos + B, static_cast<int32_t>(st.t));
  Var y = positions_->forward(g, *tgt_embed_, prev,
                              {pos, static_cast<size_t>(B)});  // y_{t-1} at t  [B, d]
  Step out;
  const auto first = static_cast<size_t>(config_.first_attending());
  for (size_t l = 0; l < decoder_.size(); ++l) {
    // a layer that follows the shared policy decodes with the policy layer's stops
    MonotonicHeadsState* heads =
        st.heads.empty() ? nullptr : &st.heads[decoder_[l].follows_policy() ? first : l];
    // rows dropped (finished sentences): the memory's first M rows
    const Var& kv = st.memory_kv[l];
    const int64_t M = B / st.rows_per_memory;
    const Var memory =
        !kv.valid() || kv.dim(0) == M ? kv : g.constant(kv.value().rows(0, M));  // [M, S, 2d]
    // (its first M rows too)
    const float* keys_t = st.memory_keys_t.empty() ? nullptr : st.memory_keys_t[l].data();
    y = decoder_[l].step(y, memory, st.memory_lengths.first(static_cast<size_t>(M)), st.caches[l],
                         heads, config_.layer.wait_k,
                         static_cast<int>(l) == attention_layer ? &out.weights : nullptr,
                         st.rows_per_memory, keys_t);
    out.ran_off = out.ran_off || (heads != nullptr && heads->ran_off());
  }
  ++st.t;
  if (scores == Scores::None) return out;  // the caches alone: no output layer
  if (!dec_final_.empty()) y = dec_final_.front().forward(y);
  if (scores == Scores::Best || scores == Scores::Argmax) {  // no [B, V] logits made
    const auto n = static_cast<size_t>(B);
    if (scores == Scores::Argmax) best_k = 1;
    auto* ids = g.arena().array<int32_t>(n * static_cast<size_t>(best_k));
    auto* values = g.arena().array<float>(n * static_cast<size_t>(best_k));
    auto* log_z = scores == Scores::Best ? g.arena().array<float>(n) : nullptr;
    best_outputs(y, g.param(config_.tie_output ? *tgt_embed_ : *out_W_), g.param(*out_b_),
                 Vocab::kEos, best_k, ids, values, log_z);
    out.best_ids = ids;
    out.best_logits = values;
    out.log_z = log_z;
    return out;
  }
  out.logits = output(y);  // [B, V]
  if (scores == Scores::LogProbs) out.log_probs = log_softmax(out.logits);
  return out;
}

namespace {

// t, a heap tensor [1, capacity, w], made to hold at least `need` rows, its first `filled` kept
// (the capacity at least doubled when it grows).
void reserve_rows(Tensor& t, int64_t filled, int64_t need, int64_t w) {
  if (t.data() != nullptr && t.shape().dim(1) >= need) return;
  Tensor wider = Tensor::zeros(Shape{1, std::max<int64_t>(16, 2 * need), w});
  if (filled > 0) std::copy(t.data(), t.data() + filled * w, wider.data());
  t = std::move(wider);
}

// Incremental decoding of the Transformer: the state is the per-layer key/value caches and the
// projected memory, all made by start() before the mark; each step frees the previous step's
// nodes (Graph::rewind) and so runs in the memory of one position.
class TransformerDecoder final : public IncrementalDecoder {
 public:
  TransformerDecoder(const TransformerSeq2Seq& model, Graph& g, const Seq2SeqBatch& b,
                     int64_t max_len, const AttentionChoice& a, int64_t rows_per_source)
      : model_(model),
        g_(g),
        start_(g.mark()),
        state_(model.start(g, b, max_len, rows_per_source)),
        encoded_(g.mark()),
        max_len_(max_len),
        rows_per_source_(rows_per_source),
        B_(b.B * rows_per_source),
        S_(state_.packing.T),
        head_(a.head) {
    const auto layers = static_cast<int>(model.config().dec_layers);
    const auto heads = static_cast<int>(model.config().layer.heads);
    layer_ = a.wanted ? (a.layer < 0 ? layers - 1 : a.layer) : -1;
    check(layer_ < layers, "--attention-layer ", a.layer, ": the decoder has ", layers,
          " layers (0..", layers - 1, ")");
    const auto first = static_cast<int>(model.config().first_attending());
    check(layer_ < 0 || layer_ >= first, "--attention-layer ", a.layer, ": layers 0..", first - 1,
          " of this decoder do not attend to the source (monotonic heads in layers ", first, "..",
          layers - 1, ")");
    check(head_ < heads, "--attention-head ", a.head, ": the model has ", heads, " heads (0..",
          heads - 1, ")");
    if (layer_ >= 0) weights_.resize(static_cast<size_t>(B_ * S_));
  }

  bool log_probs_are_log_softmax() const override { return true; }
  int64_t best_k() const override {
    return std::min<int64_t>(rows_per_source_, model_.config().tgt_vocab - Vocab::kEos);
  }

  Step step(std::span<const int32_t> prev, Scores scores) override {
    if (state_.t > 0) g_.rewind(encoded_, {});
    before_ = state_.heads;  // monotonic heads: online decoding may take this step back
    TransformerSeq2Seq::Step s =
        model_.step(g_, prev, state_, scores, layer_, scores == Scores::Best ? best_k() : 0);
    Step out{step_scores(scores, s.logits, s.log_probs), nullptr, s.ran_off};
    out.best_ids = s.best_ids;
    out.best_logits = s.best_logits;
    out.log_z = s.log_z;
    if (layer_ >= 0) {  // [B / K, h, K, S] -> one head, or the mean over heads: [B, S]
      const int64_t h = s.weights.shape().dim(1), K = state_.rows_per_memory;
      const float* w = s.weights.data();
      for (int64_t b = 0; b < B_; ++b)
        for (int64_t j = 0; j < S_; ++j) {
          float sum = 0;
          for (int64_t k = 0; k < h; ++k)
            if (head_ < 0 || k == head_) sum += w[((b / K * h + k) * K + b % K) * S_ + j];
          weights_[b * S_ + j] = head_ < 0 ? sum / static_cast<float>(h) : sum;
        }
      out.weights = weights_.data();
    }
    return out;
  }

  const TransformerSeq2Seq::DecoderState& state() const { return state_; }

  void reorder(std::span<const int32_t> from) override {
    for (KvCache& c : state_.caches) c.reorder(from);
    for (MonotonicHeadsState& h : state_.heads) h.reorder(from);  // the caches stay where they are
  }

  // The self-attention caches and the heads' stops do not depend on the source: they outlive a
  // new encoding of the longer source (the caches moved out of the graph's arena once).
  bool extend_source(const Seq2SeqBatch& longer, bool retake) override {
    check(longer.B * rows_per_source_ == B_, "extend_source: ", longer.B, " sources for ", B_,
          " rows");
    if (retake) {
      check(state_.t > 0, "extend_source: no step to take back");
      for (KvCache& c : state_.caches) --c.t;
      state_.heads = before_;
      --state_.t;
    }
    std::vector<KvCache> caches = std::move(state_.caches);
    if (!caches_on_heap_)
      for (KvCache& c : caches) {
        c.k = c.k.clone();
        c.v = c.v.clone();
      }
    caches_on_heap_ = true;
    std::vector<MonotonicHeadsState> heads = std::move(state_.heads);
    const int64_t t = state_.t;
    g_.rewind(start_, {});  // the old encoding and everything since
    if (B_ == 1 && model_.config().layer.causal_encoder) {
      encode_positions(longer);  // one sequence: its new positions alone
    } else {
      state_ = model_.start(g_, longer, max_len_, rows_per_source_);
    }
    state_.caches = std::move(caches);
    state_.heads = std::move(heads);
    state_.t = t;
    S_ = longer.S;
    if (layer_ >= 0) weights_.resize(static_cast<size_t>(B_ * S_));
    encoded_ = g_.mark();
    return true;
  }

  // The kept rows move to the front of the caches, the memory and the source lengths (in place:
  // `keep` ascends, so no row is overwritten before it is read); the next steps see B = n.
  bool drop_rows(std::span<const int32_t> keep) override {
    const auto n = static_cast<int64_t>(keep.size());
    for (KvCache& c : state_.caches) c.keep_rows(keep);
    for (MonotonicHeadsState& h : state_.heads) h.reorder(keep);
    // the memory rows of the kept rows: whole groups of K (a beam's rows leave together)
    const int64_t K = state_.rows_per_memory;
    check(n % K == 0, "drop_rows: ", n, " rows kept of groups of ", K);
    memory_keep_.resize(static_cast<size_t>(n / K));
    for (int64_t r = 0; r < n / K; ++r) {
      check(keep[r * K] % K == 0 && keep[r * K + K - 1] == keep[r * K] + K - 1,
            "drop_rows: a group of ", K, " rows split");
      memory_keep_[r] = static_cast<int32_t>(keep[r * K] / K);
    }
    for (const Var& m : state_.memory_kv) {
      if (!m.valid()) continue;   // a layer that does not attend
      Tensor memory = m.value();  // [B / K, S, 2d], shares the node's storage
      kernels::keep_rows(memory.data(), memory.shape().inner(0), memory.shape().inner(0),
                         memory_keep_);
    }
    for (Tensor& kt : state_.memory_keys_t)  // [B / K, h, d / h, S']
      if (kt.data() != nullptr)
        kernels::keep_rows(kt.data(), kt.shape().inner(0), kt.shape().inner(0), memory_keep_);
    keep_lengths(state_.src_lengths, lengths_, keep);
    keep_lengths(state_.memory_lengths, memory_lengths_, memory_keep_);
    B_ = n;
    return true;
  }

 private:
  // One sequence, a causal encoder: the positions of `longer` not encoded yet go through the
  // encoder one at a time (its per-layer caches and the decoder layers' projected memory kept on
  // the heap, grown by doubling), so a READ costs one position, not the prefix again; the state
  // gets the memory over all of them. (The first time, every position from 0: the memory start()
  // made in the graph is not extended.)
  void encode_positions(const Seq2SeqBatch& longer) {
    const int64_t d = model_.config().layer.d_model;
    if (encoder_caches_.empty())
      encoder_caches_.assign(static_cast<size_t>(model_.encoder_layers()), KvCache{});
    for (int64_t j = positions_encoded_; j < longer.S; ++j) {
      for (KvCache& c : encoder_caches_) c.reserve(c.t + 1, d);
      const std::vector<Var> rows = model_.encode_position(
          g_, std::span<const int32_t>(longer.src).subspan(static_cast<size_t>(j), 1), j,
          encoder_caches_);
      if (memory_.empty()) memory_.resize(rows.size());
      for (size_t l = 0; l < rows.size(); ++l) {
        if (!rows[l].valid()) continue;       // a layer that does not attend: no memory
        const Tensor& row = rows[l].value();  // [1, 1, w]
        const int64_t w = row.shape().dim(2);
        reserve_rows(memory_[l], j, j + 1, w);
        std::copy(row.data(), row.data() + w, memory_[l].data() + j * w);
      }
      g_.rewind(start_, {});  // this position's nodes: its values are in the caches and memory_
    }
    positions_encoded_ = longer.S;
    state_.memory_kv.clear();
    state_.memory_keys_t.clear();  // (one row per memory row here: none made)
    for (Tensor& m : memory_)
      state_.memory_kv.push_back(
          m.data() == nullptr
              ? Var{}
              : g_.constant(Tensor::view(m.data(), Shape{1, longer.S, m.shape().dim(2)})));
    auto* length = g_.arena().array<int32_t>(1);
    length[0] = static_cast<int32_t>(longer.S);
    state_.src_lengths = std::span<const int32_t>(length, 1);
    state_.memory_lengths = state_.src_lengths;
  }

  const TransformerSeq2Seq& model_;
  Graph& g_;
  Graph::Mark start_;  // before the encoding: extend_source() frees it all and encodes again
  TransformerSeq2Seq::DecoderState state_;
  Graph::Mark encoded_;
  int64_t max_len_, rows_per_source_;
  std::vector<MonotonicHeadsState> before_;  // the heads' stops before the last step
  bool caches_on_heap_ = false;
  std::vector<KvCache> encoder_caches_;  // encode_positions(): per encoder layer, on the heap
  std::vector<Tensor> memory_;           // per decoder layer [1, capacity, w], on the heap
  int64_t positions_encoded_ = 0;        // the positions in memory_
  int64_t B_, S_;
  int layer_ = -1, head_ = -1;
  std::vector<float> weights_;           // [B, S]
  std::vector<int32_t> lengths_;         // [B] the source lengths once rows were dropped
  std::vector<int32_t> memory_lengths_;  // [B / K] the same per memory row
  std::vector<int32_t> memory_keep_;     // drop_rows: the memory rows kept

  // lengths <- its entries `keep`, held in `buffer`
  static void keep_lengths(std::span<const int32_t>& lengths, std::vector<int32_t>& buffer,
                           std::span<const int32_t> keep) {
    std::vector<int32_t> kept(keep.size());
    for (size_t r = 0; r < keep.size(); ++r) kept[r] = lengths[static_cast<size_t>(keep[r])];
    buffer = std::move(kept);
    lengths = buffer;
  }
};

}  // namespace

std::unique_ptr<IncrementalDecoder> TransformerSeq2Seq::start_decoding(
    Graph& g, const Seq2SeqBatch& b, int64_t max_len, const AttentionChoice& a,
    int64_t rows_per_source) const {
  auto decoder = std::make_unique<TransformerDecoder>(*this, g, b, max_len, a, rows_per_source);
  // joint CTC-attention decoding over each row's memory; at weight 0 the attention's scores
  // alone, without the CTC prefix scores the wrapper would compute and not use
  if (!ctc_ || config_.joint_decode_weight() == 0.f) return decoder;
  const TransformerSeq2Seq::DecoderState& st = decoder->state();
  const Var annotations = repeat_rows(unpack(st.memory, st.packing), rows_per_source);
  const std::span<const int32_t> lengths = st.src_lengths;
  return ctc_->decoder(std::move(decoder), annotations, lengths, config_.joint_decode_weight());
}

}  // namespace heed
