// The RNN encoder-decoder with attention (equations in the header) and its incremental decoder.
// Leaves out: search (decode/) and training loops (train/).
#include "heed/models/rnn_seq2seq.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "heed/autograd/ops.h"
#include "heed/data/vocab.h"
#include "heed/kernels/layout.h"
#include "heed/kernels/softmax.h"
#include "heed/kernels/vmath.h"
#include "heed/models/model_options.h"
#include "heed/nn/audio_encoder_stream.h"
#include "heed/nn/latency_loss.h"
#include "heed/nn/syntactic_attention.h"
#include "heed/util/error.h"
#include "heed/util/json.h"
#include "heed/util/overloaded.h"

namespace heed {

std::span<const Named<Readout>> names(Readout) {
  static constexpr Named<Readout> kNames[] = {{Readout::Concat, "concat"},
                                              {Readout::Maxout, "maxout"}};
  return kNames;
}

nlohmann::json RnnSeq2SeqConfig::to_json() const {
  nlohmann::json j = {{"model", kFamily}};
  encoder_to_json(encoder, j);
  j["tgt_vocab"] = tgt_vocab;
  j["tgt_embed"] = tgt_embed;
  j["dec_hidden"] = dec_hidden;
  j["dec_cell"] = cell_name(dec_cell);
  j["attention"] = attention_name(attention);
  j["attn_dim"] = attn_dim;
  local.to_json(j);  // every model has written its window
  if (monotonic()) {
    monotonic_attention.to_json(j);
    latency.to_json(j);
  }
  if (attention == AttentionKind::Hard) hard.to_json(j);
  if (attention == AttentionKind::Location) location.to_json(j);
  if (audio) j["audio"] = audio->to_json();
  if (ctc_weight > 0) j["ctc_weight"] = json_number(ctc_weight);
  if (ctc_decode_weight >= 0) j["ctc_decode_weight"] = json_number(ctc_decode_weight);
  if (ctc_decode_lookahead >= 0) j["ctc_decode_lookahead"] = ctc_decode_lookahead;
  if (wait_k > 0) j["wait_k"] = wait_k;
  if (wait_k_chunk > 0) j["wait_k_chunk"] = wait_k_chunk;
  if (readout == Readout::Maxout) {  // absent: concat, as every model before the choice
    j["readout"] = name_of(readout);
    j["readout_dim"] = readout_dim;
  }
  j["dropout"] = json_number(dropout);
  j["reverse_source"] = reverse_source;
  if (syntactic_attention) j["syntactic_attention"] = true;  // absent: none, as older models
  return j;
}

// GRUs of 256/512, Bahdanau's attention, one bidirectional encoder layer: the default config;
// --encoder conv | kim put another encoder in front (sized by --embed), not a Transformer's.
RnnSeq2SeqConfig RnnSeq2SeqConfig::configure(const ModelOptions& o) {
  check(o.encoder != EncoderKind::Transformer,
        "--encoder transformer is for ctc models (an rnn model's: rnn or conv)");
  RnnSeq2SeqConfig c;
  RnnEncoderConfig rnn = std::get<RnnEncoderConfig>(c.encoder);
  rnn.cell = c.dec_cell = o.cell.value_or(c.dec_cell);
  c.encoder = sequence_encoder(o, rnn);
  c.tgt_embed = o.tgt_embed;
  c.dec_hidden = o.dec_hidden;
  c.attention = o.attention.value_or(c.attention);
  c.attn_dim = o.attn_dim.value_or(c.attn_dim);
  c.local = o.local;
  c.monotonic_attention = o.monotonic_attention;
  c.latency = latency_loss(o);
  c.wait_k = o.wait_k;
  c.wait_k_chunk = o.wait_k_chunk;
  c.hard = o.hard;
  c.location = o.location;
  c.ctc_weight = o.ctc_weight;
  c.dropout = o.dropout.value_or(c.dropout);
  c.readout = o.readout;
  c.readout_dim = o.readout_dim;
  c.reverse_source = o.reverse_source;
  c.syntactic_attention = o.syntactic_attention;
  check_monotonic_options(o, c.monotonic(), /*heads=*/false);
  refuse_ctc_options(o, kFamily);
  return c;
}

RnnSeq2SeqConfig RnnSeq2SeqConfig::from_json(const nlohmann::json& j) {
  RnnSeq2SeqConfig c;
  try {
    check(j.at("model").get<std::string>() == kFamily, "config.json: not an rnn model");
    c.encoder = encoder_from_json(j);
    c.tgt_vocab = j.at("tgt_vocab").get<int64_t>();
    c.tgt_embed = j.at("tgt_embed").get<int64_t>();
    c.dec_hidden = j.at("dec_hidden").get<int64_t>();
    c.dec_cell = parse_cell(j.at("dec_cell").get<std::string>());
    c.attention = parse_attention(j.at("attention").get<std::string>());
    c.attn_dim = j.at("attn_dim").get<int64_t>();
    c.local = LocalAttentionConfig::from_json(j);
    if (c.monotonic()) {
      c.monotonic_attention = MonotonicAttentionConfig::from_json(j);
      c.latency = LatencyLoss::from_json(j);
      check(c.latency.gather == LatencyGather::Mean && c.latency.var_weight == 0.f,
            "config.json: monotonic_latency_gather and monotonic_latency_var are for a "
            "transformer's heads, not an rnn's one");
    }
    if (c.attention == AttentionKind::Hard) c.hard = HardAttentionConfig::from_json(j);
    if (c.attention == AttentionKind::Location) c.location = LocationAttentionConfig::from_json(j);
    if (j.contains("audio")) c.audio = AudioFrontEndConfig::from_json(j.at("audio"));
    c.ctc_weight = j.value("ctc_weight", 0.f);
    c.ctc_decode_weight = j.value("ctc_decode_weight", -1.f);
    c.ctc_decode_lookahead = j.value("ctc_decode_lookahead", int64_t{-1});
    c.wait_k = j.value("wait_k", int64_t{0});
    c.wait_k_chunk = j.value("wait_k_chunk", int64_t{0});
    if (j.contains("readout")) {
      c.readout = parse_name<Readout>(j.at("readout").get<std::string>(), "readout");
      if (c.readout == Readout::Maxout) c.readout_dim = j.at("readout_dim").get<int64_t>();
    }
    c.dropout = j.at("dropout").get<float>();
    c.reverse_source = j.at("reverse_source").get<bool>();
    c.syntactic_attention = j.value("syntactic_attention", false);
  } catch (const nlohmann::json::exception& e) {
    fail("config.json: malformed rnn model config (", e.what(), ")");
  }
  if (auto* rnn = std::get_if<RnnEncoderConfig>(&c.encoder)) rnn->dropout = c.dropout;
  return c;
}

OnlinePolicy RnnSeq2SeqConfig::online_policy() const {
  if (const auto* conv = std::get_if<ConvEncoderConfig>(&encoder); conv && !conv->causal)
    return {.reason =
                "a centred convolutional encoder (train with --conv-causal to decode online)"};
  if (std::holds_alternative<TransformerEncoderConfig>(encoder))
    return {.reason = "a Transformer encoder, whose every state sees the whole source"};
  if (const auto* rnn = std::get_if<RnnEncoderConfig>(&encoder); rnn && rnn->bidirectional)
    return {.reason = "a bidirectional encoder (train with --unidirectional to decode online)"};
  if (reverse_source) return {.reason = "a reversed source"};
  if (syntactic_attention)
    return {.reason = "syntactic attention, whose tree spans the whole source"};
  if (monotonic()) return {.kind = OnlinePolicy::Kind::Monotonic, .k = 0, .reason = ""};
  if (wait_k > 0) return {.kind = OnlinePolicy::Kind::WaitK, .k = wait_k, .reason = ""};
  return {.reason = attention_name(attention) +
                    " attention over the whole source (train with --wait-k K or --attention "
                    "monotonic|mocha to decode online)"};
}

std::string RnnSeq2SeqConfig::describe() const {
  if (std::holds_alternative<ConvEncoderConfig>(encoder) ||
      std::holds_alternative<KimEncoderConfig>(encoder))
    return "rnn/" + attention_name(attention) + ", " + heed::describe(encoder);
  if (attention == AttentionKind::Hard)
    return "rnn/hard (" + attention_name(hard.score) + ", " + name_of(hard.training) + ")";
  if (audio)
    return "rnn/" + attention_name(attention) + ", " + audio->describe() + ", " +
           heed::describe(encoder);
  return "rnn/" + attention_name(attention);
}

void RnnSeq2SeqConfig::set_vocabularies(int64_t src, int64_t tgt) {
  if (!audio) set_vocab_size(encoder, src);
  tgt_vocab = tgt;
}

void RnnSeq2SeqConfig::set_audio(const AudioFrontEndConfig& front) {
  auto* rnn = std::get_if<RnnEncoderConfig>(&encoder);
  check(rnn != nullptr, "rnn: a speech recognizer's encoder is a birnn (--encoder birnn), not ",
        heed::describe(encoder));
  check(!reverse_source,
        "rnn: a speech recognizer reads its utterance forwards as it comes (no --reverse-source)");
  if (wait_k > 0 && wait_k_chunk == 0) wait_k_chunk = 7;  // 280 ms, as Ma, Pino & Koehn 2020
  rnn->vocab = 0;  // no table: the front end's vectors, as wide as the embeddings were (--embed)
  audio = front;
  audio->dim = rnn->embed;
}

RnnSeq2Seq::RnnSeq2Seq(const RnnSeq2SeqConfig& c, const Scope& scope)
    : RnnSeq2Seq(c, scope, make_attention) {}

RnnSeq2Seq::RnnSeq2Seq(
    const RnnSeq2SeqConfig& c, const Scope& scope,
    const std::function<std::unique_ptr<Attention>(const AttentionConfig&, const Scope&)>&
        make_mechanism)
    : config_(c),
      front_(c.audio ? std::make_unique<AudioFrontEnd>(*c.audio, scope) : nullptr),
      encoder_(c.syntactic_attention
                   ? wrap_syntactic_attention(make_sequence_encoder(c.encoder, scope), scope)
                   : make_sequence_encoder(c.encoder, scope)),
      dec_cell_(c.dec_cell, c.tgt_embed, c.dec_hidden, scope / "decoder" / "rnn") {
  check(c.tgt_vocab > 0, "rnn model: empty target vocabulary");
  if (c.attention == AttentionKind::Hard && c.hard.baseline == HardBaseline::Word)
    baseline_ = ReinforceBaseline(c.tgt_vocab);
  check(c.readout == Readout::Concat || !c.luong_style(),
        "rnn model: --readout maxout is the deep output of Bahdanau-style decoders (attention "
        "none, bahdanau, monotonic, mocha or hard); ",
        attention_name(c.attention), " reads out its own way");
  check(c.readout == Readout::Concat || c.readout_dim > 0,
        "rnn model: the maxout read-out needs readout_dim > 0");
  const int64_t Dm = encoder_->width(), H = c.dec_hidden, V = c.tgt_vocab;
  const int64_t G = (c.dec_cell == CellKind::Gru ? 3 : 4) * H;
  Scope dec = scope / "decoder";
  tgt_embed_ = &dec.param("embed", {V, c.tgt_embed}, Init::normal(0.1f), /*row_sparse=*/true);
  init_W_ = &dec.param("init/W", {H, Dm}, Init::glorot_uniform());
  init_b_ = &dec.param("init/b", {H}, Init::zeros());
  if (c.luong_style()) {
    feed_W_ = &dec.param("rnn/W_feed", {G, H}, Init::glorot_uniform());  // input feeding h~
    comb_W_ = &dec.param("W_c", {H, Dm + H}, Init::glorot_uniform());
    out_W_ = &dec.param("out/W", {V, H}, Init::glorot_uniform());
  } else if (c.hard_exact() && c.readout == Readout::Concat) {
    // no context into the gates (the sum over j stays exact); the read-out split by input
    feed_W_ = nullptr;
    out_W_ = &dec.param("out/W_s", {V, H}, Init::glorot_uniform());
    mix_W_ = &dec.param("out/W_c", {V, Dm}, Init::glorot_uniform());
    out_Wy_ = &dec.param("out/W_y", {V, c.tgt_embed}, Init::glorot_uniform());
  } else if (c.hard_exact()) {
    // the deep output for every position j: the maxout layer's W_t [s_i ; h_j ; E y_{i-1}]
    // split by input the same way (W_c h_j once per source), then W_o
    feed_W_ = nullptr;
    const int64_t P = 2 * c.readout_dim;
    maxout_W_ = &dec.param("out/maxout/W_s", {P, H}, Init::glorot_uniform());
    maxout_b_ = &dec.param("out/maxout/b", {P}, Init::zeros());
    mix_W_ = &dec.param("out/maxout/W_c", {P, Dm}, Init::glorot_uniform());
    out_Wy_ = &dec.param("out/maxout/W_y", {P, c.tgt_embed}, Init::glorot_uniform());
    out_W_ = &dec.param("out/W", {V, c.readout_dim}, Init::glorot_uniform());
  } else if (c.readout == Readout::Maxout) {
    feed_W_ = &dec.param("rnn/W_context", {G, Dm}, Init::glorot_uniform());  // c_i into gates
    maxout_W_ = &dec.param("out/maxout/W", {2 * c.readout_dim, H + Dm + c.tgt_embed},
                           Init::glorot_uniform());
    maxout_b_ = &dec.param("out/maxout/b", {2 * c.readout_dim}, Init::zeros());
    out_W_ = &dec.param("out/W", {V, c.readout_dim}, Init::glorot_uniform());
  } else {
    feed_W_ = &dec.param("rnn/W_context", {G, Dm}, Init::glorot_uniform());  // c_i into gates
    out_W_ = &dec.param("out/W", {V, H + Dm + c.tgt_embed}, Init::glorot_uniform());
  }
  out_b_ = &dec.param("out/b", {V}, Init::zeros());
  check(c.ctc_weight >= 0.f && c.ctc_weight < 1.f && c.ctc_decode_weight <= 1.f,
        "rnn model: the CTC weight lambda is in [0, 1), got ", c.ctc_weight);
  if (c.ctc_weight > 0) {  // Kim et al. 2017: a CTC head sharing the encoder
    ctc_.emplace(Dm, V, scope);
  }
  check(c.ctc_decode_weight <= 0.f || c.ctc_weight > 0.f,
        "rnn model: joint CTC-attention decoding needs a model trained with --ctc-weight");
  check(c.ctc_decode_lookahead < 0 || (c.ctc_weight > 0.f && c.monotonic()),
        "rnn model: --ctc-lookahead needs a joint CTC-attention model (--ctc-weight) whose "
        "attention stops (--attention monotonic or mocha)");
  const AttentionConfig ac{.kind = c.attention,
                           .query_dim = H,
                           .memory_dim = Dm,
                           .attn_dim = c.attn_dim,
                           .local = c.local,
                           .monotonic = c.monotonic_attention,
                           .hard = c.hard,
                           .location = c.location};
  attention_ = make_mechanism(ac, dec / "attention");
  check(c.wait_k >= 0, "rnn model: wait-k needs k >= 1 (0: off), got ", c.wait_k);
  check(c.wait_k_chunk == 0 || (c.audio && c.wait_k > 0),
        "rnn model: --wait-k-chunk is for a speech model with --wait-k (text reads tokens)");
  check(c.wait_k == 0 || supports_wait_k(c.attention),
        "rnn model: wait-k works with bahdanau "
        "and luong-* attention, which attend to any source prefix; ",
        attention_name(c.attention), " does not");
}

RnnSeq2Seq::DecoderState RnnSeq2Seq::start(Graph& g, const Seq2SeqBatch& b,
                                           int64_t rows_per_source) const {
  if (b.F == 0) {
    check(!front_, "rnn: this recognizer reads audio (frames), not token ids");
    return start(g, b.src, b.S, b.src_lengths, rows_per_source);
  }
  check(front_ != nullptr, "rnn: this model reads token ids, not audio");
  check(b.F == front_->config().features, "rnn: frames of ", b.F, " bins for a model of ",
        front_->config().features);
  // Listen (Chan et al. 2016): the front end's 40 ms vectors, then the BiLSTM's annotations
  const auto n = static_cast<size_t>(b.B);
  int32_t* frames = g.arena().array<int32_t>(n);
  Var x = front_->forward(g, b.features, b.S, b.src_lengths, {frames, n});  // [S', B, D]
  return start_encoded(g, encoder_->encode_vectors(g, x, {frames, n}, {.summary = true}),
                       {frames, n}, rows_per_source);
}

RnnSeq2Seq::DecoderState RnnSeq2Seq::start(Graph& g, std::span<const int32_t> src, int64_t S,
                                           std::span<const int32_t> lengths,
                                           int64_t rows_per_source) const {
  // each source once: h [B, S, Dm] and [->h_S ; <-h_1] [B, Dm]
  return start_encoded(g, encoder_->encode(g, src, S, lengths, {.summary = true}), lengths,
                       rows_per_source);
}

RnnSeq2Seq::DecoderState RnnSeq2Seq::start(Graph& g, Var states,
                                           std::span<const int32_t> lengths) const {
  check(config_.online_policy().kind != OnlinePolicy::Kind::ReadAll,
        "rnn: only an online decoder starts without its source's summary");
  SequenceEncoder::Output encoded;
  encoded.states = states;
  return start_encoded(g, encoded, lengths, 1);
}

Tensor RnnSeq2Seq::source_trees(Graph& g, const Seq2SeqBatch& b) const {
  if (!config_.syntactic_attention || b.F > 0) return {};  // (a spoken source: not drawn yet)
  return encoder_->encode(g, b.src, b.S, b.src_lengths, {.tree = true}).tree;
}

RnnSeq2Seq::DecoderState RnnSeq2Seq::start_encoded(Graph& g, const SequenceEncoder::Output& enc,
                                                   std::span<const int32_t> lengths,
                                                   int64_t rows_per_source) const {
  const int64_t k = rows_per_source;
  const int64_t S = enc.states.dim(1);
  const std::span<const int32_t> rows = repeat_rows(g, lengths, k);
  const Memory memory{repeat_rows(enc.states, k), padding_mask(rows, S, g), rows};
  DecoderState st = start_attending(g, attention_->start(g, memory), enc.summary, k);
  // W_c h_j: every position's share of the logits (or of the maxout layer's input), once per
  // source
  if (config_.hard_exact())
    st.mix_keys = repeat_rows(linear(dropout(enc.states, config_.dropout), g.param(*mix_W_)),
                              k);  // [B, S, V or 2l]
  return st;
}

RnnSeq2Seq::DecoderState RnnSeq2Seq::start_heard(Graph& g, AttentionState heard) const {
  check(config_.online_policy().kind != OnlinePolicy::Kind::ReadAll && !config_.hard_exact(),
        "rnn: only an online decoder starts on a stream's memory");
  return start_attending(g, std::move(heard), Var{}, 1);
}

RnnSeq2Seq::DecoderState RnnSeq2Seq::start_attending(Graph& g, AttentionState attention,
                                                     Var summary, int64_t rows_per_source) const {
  const int64_t B = attention.memory.annotations.dim(0);
  DecoderState st;
  st.attention = std::move(attention);
  st.attention.wait_k = config_.wait_k;
  st.attention.wait_chunk = std::max<int64_t>(config_.wait_k_chunk, 1);
  if (config_.online_policy().kind == OnlinePolicy::Kind::ReadAll) {
    // s_0 = tanh(W [->h_S ; <-h_1] + b)
    st.rnn.h =
        tanh(linear(repeat_rows(summary, rows_per_source), g.param(*init_W_), g.param(*init_b_)));
  } else {
    // online: no summary of a source still arriving, s_0 = tanh(b)
    st.rnn.h = tanh(g.constant(g.zeros(Shape{B, config_.dec_hidden})) + g.param(*init_b_));
  }
  if (config_.dec_cell == CellKind::Lstm)
    st.rnn.c = g.constant(g.zeros(Shape{B, config_.dec_hidden}));
  st.feed = g.constant(g.zeros(Shape{B, config_.dec_hidden}));
  return st;
}

auto RnnSeq2Seq::DecoderState::carried()
    -> std::array<Var*, 3 + std::tuple_size_v<AttentionCarried>> {
  std::array<Var*, 3 + std::tuple_size_v<AttentionCarried>> vars = {&rnn.h, &rnn.c, &feed};
  const AttentionCarried a = attention.carried();
  std::copy(a.begin(), a.end(), vars.begin() + 3);
  return vars;
}

void RnnSeq2Seq::DecoderState::reorder(std::span<const int32_t> from) {
  // rows `from` of each [B, H] state: a row gather is an embedding lookup
  const Shape rows{static_cast<int64_t>(from.size())};
  for (Var* v : {&rnn.h, &rnn.c, &feed})
    if (v->valid()) *v = embedding(*v, from, rows);
  attention.reorder(from);
}

void RnnSeq2Seq::recycle(Graph& g, const Graph::Mark& encoded, DecoderState& state) {
  g.rewind(encoded, state.carried());
}

Var RnnSeq2Seq::advance(Graph& g, Var gy, Var y, DecoderState& st, Attended& a,
                        Var* expected) const {
  const Attention& mechanism = *attention_;
  if (config_.hard_exact()) {
    st.rnn = dec_cell_.step(g, gy, st.rnn);           // s_i = RNN(E y_{i-1}, s_{i-1})
    a = mechanism.attend(g, st.rnn.h, st.attention);  // alpha_i from s_i
    return st.rnn.h;
  }
  if (!config_.luong_style()) {
    a = mechanism.attend(g, st.rnn.h, st.attention);  // c_i from s_{i-1}
    if (expected && a.expected.valid()) {  // the same step from s_{i-1} with sum_j alpha_ij h_j
      const RnnState s = dec_cell_.step(g, gy + linear(a.expected, g.param(*feed_W_)), st.rnn);
      *expected = concat({s.h, a.expected, y}, 1);
    }
    st.rnn = dec_cell_.step(g, gy + linear(a.context, g.param(*feed_W_)), st.rnn);
    st.feed = a.context;
    return concat({st.rnn.h, a.context, y}, 1);  // [s_i ; c_i ; E y_{i-1}]  [B, H + Dm + E]
  }
  st.rnn = dec_cell_.step(g, gy + linear(st.feed, g.param(*feed_W_)), st.rnn);  // input feeding
  a = mechanism.attend(g, st.rnn.h, st.attention);                              // c_t from h_t
  st.feed = tanh(linear(concat({a.context, st.rnn.h}, 1), g.param(*comb_W_)));  // h~_t [B, H]
  return st.feed;
}

Var RnnSeq2Seq::hard_base(Var o, Var y) const {
  Graph& g = o.graph();
  const bool deep = config_.readout == Readout::Maxout;
  return linear(o, g.param(deep ? *maxout_W_ : *out_W_), g.param(deep ? *maxout_b_ : *out_b_)) +
         linear(y, g.param(*out_Wy_));
}

Var RnnSeq2Seq::hard_scores(Var base, const DecoderState& st, const Attended& a) const {
  Graph& g = base.graph();
  const int64_t B = st.mix_keys.dim(0), S = st.mix_keys.dim(1), P = st.mix_keys.dim(2);
  const bool deep = config_.readout == Readout::Maxout;
  // the deep output of pre-activations t~ [..., 2l]: W_o maxout(t~) + b_o  [..., V]
  auto deep_out = [&](Var pre) {
    return linear(dropout(maxout(pre), config_.dropout), g.param(*out_W_));
  };
  if (a.log_weights.valid()) {
    // training, and decoding with the marginal: log p(y_i) = log sum_j alpha_ij softmax(l_ij)
    // [B, V], with l_ij = base + W_c h_j (concat) or W_o maxout(base + W_c h_j) + b_o (maxout)
    if (!deep) return hard_marginal(base, st.mix_keys, a.log_weights);
    const Var pre = add(reshape(base, Shape{B, 1, P}), st.mix_keys);  // t~_ij [B, S, 2l]
    const Var bias = add(g.constant(g.zeros(Shape{B, config_.tgt_vocab})), g.param(*out_b_));
    return hard_marginal(bias, deep_out(pre), a.log_weights);  // W_o t_ij [B, S, V]
  }
  // argmax decoding: the chosen j's logits  [B, V]
  int32_t* rows = g.arena().array<int32_t>(static_cast<size_t>(B));
  for (int64_t b = 0; b < B; ++b) rows[b] = static_cast<int32_t>(b * S + a.chosen[b]);
  const Var chosen =
      embedding(reshape(st.mix_keys, Shape{B * S, P}), {rows, static_cast<size_t>(B)}, Shape{B});
  if (!deep) return base + chosen;
  return add(deep_out(base + chosen), g.param(*out_b_));
}

namespace {

// log softmax(logits)[y] of each target token, 0 on padding  [T, B]; values only, no graph node
std::vector<float> target_log_probs(Graph& g, Var logits, std::span<const int32_t> tokens) {
  const int64_t N = logits.dim(0) * logits.dim(1), V = logits.dim(2);
  Tensor lp = g.alloc(logits.shape());
  kernels::softmax_forward(logits.value().data(), {}, lp.data(), logits.shape(), /*log=*/true);
  std::vector<float> out(static_cast<size_t>(N), 0.f);
  for (int64_t i = 0; i < N; ++i)
    if (tokens[i] != Vocab::kPad) out[i] = lp.data()[i * V + tokens[i]];
  return out;
}

}  // namespace

Var RnnSeq2Seq::reinforce_term(Graph& g, Var logits, Var expected_logits, const Seq2SeqBatch& b,
                               const std::vector<Attended>& steps) const {
  // the rewards: log p(y_t) of each target token under the sampled contexts  [T, B]
  const int64_t T = b.T, B = b.B;
  const std::vector<float> rewards = target_log_probs(g, logits, b.tgt_out);
  const auto N = static_cast<float>(b.target_tokens);
  std::vector<float> baselines;
  if (expected_logits.valid()) {  // b_t = log p(y_t | s_{t-1}, sum_j alpha_tj h_j)
    baselines = target_log_probs(g, expected_logits, b.tgt_out);
  } else {  // the moving averages of earlier batches' rewards
    if (std::isnan(baseline_.per_token())) baseline_.update(rewards, b.tgt_out, Vocab::kPad);
    baselines = baseline_.of(b.tgt_out, Vocab::kPad);
    baseline_.update(rewards, b.tgt_out, Vocab::kPad);
  }
  const Tensor advantage = reinforce_advantage(g, rewards, baselines, b.tgt_out, Vocab::kPad, T, B,
                                               config_.hard.discount);
  std::vector<Var> log_probs, entropies;
  for (const Attended& a : steps) {
    log_probs.push_back(reshape(a.log_prob, Shape{1, B}));
    entropies.push_back(reshape(a.entropy, Shape{1, B}));
  }
  Var term = reinforce_surrogate(concat(log_probs, 0), advantage, N);  // [T, B] -> []
  if (config_.hard.entropy > 0.f) {
    // the bonus -lambda/N sum H(alpha_i): REINFORCE's surrogate with advantage lambda
    Tensor lambda = g.zeros(Shape{T, B});
    for (int64_t i = 0; i < T * B; ++i)
      if (b.tgt_out[i] != Vocab::kPad) lambda.data()[i] = config_.hard.entropy;
    term = term + reinforce_surrogate(concat(entropies, 0), lambda, N);
  }
  return term;
}

RnnSeq2Seq::Step RnnSeq2Seq::step(Graph& g, std::span<const int32_t> prev,
                                  const DecoderState& state, Scores scores) const {
  const auto B = static_cast<int64_t>(prev.size());
  Var y = embedding(g.param(*tgt_embed_), prev, Shape{B});  // E y_{t-1} [B, E]
  Step out;
  out.next = state;
  Attended a;
  Var o = advance(g, dec_cell_.project(g, y), y, out.next, a);
  out.weights = a.weights;
  if (scores == Scores::None) return out;  // the state alone: no read-out
  if (config_.hard_exact())                // W_s s_i + W_y E y_{i-1} + b, then h_j's share
    out.logits = hard_scores(hard_base(o, y), out.next, a);
  else
    out.logits = read_out(o);  // [B, V]
  if (scores == Scores::LogProbs) out.log_probs = log_softmax(out.logits);
  return out;
}

RnnSeq2Seq::ReadoutStreams RnnSeq2Seq::readout_streams(Graph& g) const {
  // in the order the read-out's dropouts would draw them
  ReadoutStreams s;
  s.input = dropout_stream(g, config_.dropout);
  if (config_.readout == Readout::Maxout) s.maxout = dropout_stream(g, config_.dropout);
  return s;
}

Var RnnSeq2Seq::read_out_input(Var o, const ReadoutStreams& streams) const {
  o = dropout(o, config_.dropout, streams.input);
  if (config_.readout == Readout::Concat) return o;  // W o_i + b follows
  // Bahdanau et al. 2015, A.2.2: t~ = W_t o_i + b_t [..., 2l]; t_j = max(t~_2j-1, t~_2j) [..., l]
  Graph& g = o.graph();
  const Var t = maxout(linear(o, g.param(*maxout_W_), g.param(*maxout_b_)));
  return dropout(t, config_.dropout, streams.maxout);  // W_o t_i + b follows
}

Var RnnSeq2Seq::maxout(Var pre) const {
  std::vector<int64_t> pairs = pre.shape().dims();
  pairs.back() = config_.readout_dim;
  pairs.push_back(2);  // [..., l, 2]: the adjacent pairs
  return max(reshape(pre, Shape(pairs)), static_cast<int>(pairs.size()) - 1);
}

Var RnnSeq2Seq::read_out(Var o, const ReadoutStreams& streams) const {
  Graph& g = o.graph();
  return linear(read_out_input(o, streams), g.param(*out_W_), g.param(*out_b_));
}

Var RnnSeq2Seq::read_out(Var o) const {
  return read_out(o, readout_streams(o.graph()));
}

Var RnnSeq2Seq::loss(Graph& g, const Seq2SeqBatch& b, float label_smoothing) const {
  DecoderState st = start(g, b);
  // joint CTC-attention: lambda CTC + (1 - lambda) attention (Kim, Hori & Watanabe 2017, eq. 9)
  const float lambda = config_.ctc_weight;
  const Memory& m = st.attention.memory;
  Var ctc = lambda > 0 ? ctc_->loss(b, m.annotations, m.lengths, config_.dropout) : Var{};
  auto joint = [&](Var attention) {
    return lambda > 0 ? affine(attention, 1.f - lambda, 0.f) + affine(ctc, lambda, 0.f) : attention;
  };
  if (b.wait_k > 0) {
    check(config_.wait_k > 0, "rnn model: a batch at wait-", b.wait_k,
          " for a model trained without --wait-k");
    st.attention.wait_k = b.wait_k;
  }
  st.attention.train_step = b.step;
  // Teacher forcing: every target-side input projection in one GEMM, [T, B, G H]
  Var y = dropout(embedding(g.param(*tgt_embed_), b.tgt_in, Shape{b.T, b.B}), config_.dropout);
  Var gy = dec_cell_.project(g, y);
  std::vector<Var> outs, expected_outs;  // [1, B, *] each
  std::vector<Attended> steps(static_cast<size_t>(b.T));
  outs.reserve(b.T);
  for (int64_t t = 0; t < b.T; ++t) {
    Var expected;  // REINFORCE's expected baseline: the step with sum_j alpha_tj h_j
    Var o = advance(g, select(gy, 0, t), select(y, 0, t), st, steps[t], &expected);  // [B, *]
    outs.push_back(reshape(o, Shape{1, o.dim(0), o.dim(1)}));
    if (expected.valid()) expected_outs.push_back(reshape(expected, outs.back().shape()));
  }
  // The read-out's GEMMs over all target positions at once: [T, B, *] -> [T, B, V]
  const CrossEntropyOptions ce{.ignore_index = Vocab::kPad, .label_smoothing = label_smoothing};
  const bool sampled = !steps.empty() && steps.front().log_prob.valid();  // REINFORCE's
  if (!config_.hard_exact() && !sampled) {  // the output layer fused with its loss, by chunks
    Var nll = linear_cross_entropy(read_out_input(concat(outs, 0), readout_streams(g)),
                                   g.param(*out_W_), g.param(*out_b_), b.tgt_out, ce);
    // monotonic attention trained against its latency (a training term: validation's loss
    // stays the cross-entropy)
    const LatencyLoss terms = config_.latency.at_step(b.step);  // after its warm-up
    if (config_.monotonic() && terms.trains() && g.training())
      return joint(nll) + latency_term(b, m, steps, terms);
    return joint(nll);
  }
  Var logits, expected_logits;
  if (config_.hard_exact()) {
    // W_s s_i + b + W_y E y_{i-1} [T, B, V or 2l], then per step the sum over j: log p
    // [T, B, V], which cross_entropy's log-softmax leaves as it is
    logits = hard_base(dropout(concat(outs, 0), config_.dropout), y);
    std::vector<Var> rows;
    for (int64_t t = 0; t < b.T; ++t)
      rows.push_back(reshape(hard_scores(select(logits, 0, t), st, steps[t]),
                             Shape{1, b.B, config_.tgt_vocab}));
    logits = concat(rows, 0);
  } else {
    // sampled contexts; the expected baseline's read-out under the same dropout masks, so that
    // a sample whose context equals the expected one has no advantage
    const ReadoutStreams streams = readout_streams(g);
    logits = read_out(concat(outs, 0), streams);
    if (!expected_outs.empty()) expected_logits = read_out(concat(expected_outs, 0), streams);
  }
  Var loss = cross_entropy(logits, b.tgt_out, ce);
  if (sampled)  // hard attention, sampled
    loss = loss + reinforce_term(g, logits, expected_logits, b, steps);
  return joint(loss);
}

Var RnnSeq2Seq::latency_term(const Seq2SeqBatch& b, const Memory& memory,
                             std::span<const Attended> steps, const LatencyLoss& terms) const {
  // the expected alignment of every step (MoChA's under its chunks), [B, T, S]: one head, over
  // the memory's S positions (a recognizer's: its front end's, a quarter of the frames)
  const int64_t S = memory.annotations.dim(1);
  std::vector<Var> rows;
  rows.reserve(steps.size());
  for (const Attended& a : steps) {
    const Var& alpha = a.alignment.valid() ? a.alignment : a.weights;  // [B, S]
    rows.push_back(reshape(alpha, Shape{b.B, 1, S}));
  }
  const std::vector<int32_t> tgt_lengths = target_lengths(b);
  const Var delays = expected_delays(concat(rows, 1), 1, memory.lengths, tgt_lengths);  // [B, 1, T]
  return monotonic_latency_loss(std::span(&delays, 1), tgt_lengths, terms);
}

namespace {

// A stream's memory: the listener's states from position first() on (positions counted from the
// stream's start), each with the keys attention().start() made of it once, when it was heard
// (U h_j + b; MoChA's U' h_j + b'), in buffers that grow at the back and let go at the front.
// The decoder reads them as views (state()), made again after each change.
class HeardMemory {
 public:
  explicit HeardMemory(const RnnSeq2Seq& model) : model_(model), origin_(g_.mark()) {}
  // states [n, D] of the next n positions; their keys made here
  void append(std::span<const float> states, int64_t D) {
    const int64_t n = static_cast<int64_t>(states.size()) / D;
    if (n == 0) return;
    const int32_t length = static_cast<int32_t>(n);
    const Memory m{g_.input(Shape{1, n, D}, states), g_.zeros(Shape{1, n}), {&length, 1}};
    const AttentionState a = model_.attention().start(g_, m);
    states_.append(states.data(), n, D);
    keys_.append_keys(a.keys, n);
    chunk_keys_.append_keys(a.chunk_keys, n);
    if (mask_.size() < static_cast<size_t>(size())) mask_.resize(2 * mask_.size() + n, 0.f);
    g_.rewind(origin_, {});
  }
  void drop_before(int64_t position) {  // positions before `position` are never read again
    const int64_t n = std::clamp<int64_t>(position - first_, 0, size());
    for (Rows* r : {&states_, &keys_, &chunk_keys_}) r->drop(n);
    first_ += n;
  }
  int64_t first() const { return first_; }
  int64_t size() const { return states_.rows(); }
  int64_t end() const { return first_ + size(); }
  std::span<const float> states() const { return states_.span(); }  // [size(), D]
  // The memory [1, S, D] (no padding) and its keys [1, S, A], views into the buffers, in g.
  AttentionState state(Graph& g) {
    length_ = static_cast<int32_t>(size());
    AttentionState a;
    a.memory = {
        g.constant(states_.view()), Tensor::view(mask_.data(), Shape{1, size()}), {&length_, 1}};
    a.keys = g.constant(keys_.view());
    if (chunk_keys_.width > 0) a.chunk_keys = g.constant(chunk_keys_.view());
    return a;
  }

 private:
  // rows of one width: appended at the back, let go at the front (erased once they are half)
  struct Rows {
    std::vector<float> data;
    int64_t width = 0, head = 0;  // head: rows let go and not erased yet
    int64_t rows() const {
      return width == 0 ? 0 : static_cast<int64_t>(data.size()) / width - head;
    }
    void append(const float* x, int64_t n, int64_t w) {
      width = w;
      data.insert(data.end(), x, x + n * w);
    }
    // a mechanism's keys of n positions [1, n, A] (a stream's mechanisms make them per position)
    void append_keys(const Var& keys, int64_t n) {
      if (!keys.valid()) return;
      const Shape& shape = keys.value().shape();
      check(shape.rank() == 3 && shape.dim(1) == n,
            "rnn stream: this attention's keys are not one per position");
      append(keys.value().data(), n, shape.dim(2));
    }
    void drop(int64_t n) {
      head += n;
      if (2 * head < rows() + head) return;
      data.erase(data.begin(), data.begin() + head * width);
      head = 0;
    }
    std::span<const float> span() const {
      return {data.data() + head * width, static_cast<size_t>(rows() * width)};
    }
    Tensor view() const {
      return Tensor::view(const_cast<float*>(data.data()) + head * width,  // read only
                          Shape{1, rows(), width});
    }
  };
  const RnnSeq2Seq& model_;
  Graph g_{Mode::Inference};  // where the keys are made, rewound after each append
  Graph::Mark origin_;
  Rows states_, keys_, chunk_keys_;
  std::vector<float> mask_;  // 0s, at least size()
  int32_t length_ = 0;       // the memory's length, as state() last made it
  int64_t first_ = 0;
};

// Incremental decoding of the RNN model: its state is the decoder's (s or h_t, the LSTM cell,
// the fed-back vector, the attention's memory and previous alignment), so decoders of one
// model run side by side. Each step first frees the previous step's nodes (Graph::rewind),
// keeping the state.
class RnnDecoder final : public IncrementalDecoder {
 public:
  RnnDecoder(const RnnSeq2Seq& model, Graph& g, const Seq2SeqBatch& b, const AttentionChoice& a,
             int64_t rows_per_source)
      : model_(model),
        g_(g),
        start_(g.mark()),
        state_(model.start(g, b, rows_per_source)),
        encoded_(g.mark()),
        rows_per_source_(rows_per_source),
        weights_(a.wanted),
        distribution_(a.distribution) {
    state_.attention.distribution = distribution_;
  }

  bool log_probs_are_log_softmax() const override { return true; }

  Step step(std::span<const int32_t> prev, Scores scores) override {
    if (state_.t() > 0) RnnSeq2Seq::recycle(g_, encoded_, state_);
    // monotonic attention: online decoding may take this step back (it ran off the prefix); the
    // state's nodes live until the next step's recycle, so handles suffice
    retakable_ = model_.config().monotonic();
    if (retakable_) before_ = state_;
    RnnSeq2Seq::Step s = model_.step(g_, prev, state_, scores);
    state_ = s.next;
    // monotonic attention: a row attending to nothing has run off the end of its memory
    bool ran_off = false;
    if (model_.config().monotonic()) {
      const Tensor& w = s.weights.value();
      const int64_t S = w.shape().dim(1);
      for (int64_t b = 0; b < w.shape().dim(0) && !ran_off; ++b)
        ran_off = vmath::max_abs(w.data() + b * S, S) == 0.f;  // (vectorised: S may be 2,000)
    }
    return {step_scores(scores, s.logits, s.log_probs),
            weights_ ? s.weights.value().data() : nullptr, ran_off};
  }

  void reorder(std::span<const int32_t> from) override { state_.reorder(from); }
  const Memory& memory() const { return state_.attention.memory; }

  // Greedy and beam search drop finished sentences: every row-indexed tensor of the state (the
  // memory, its mask and projections, s, the LSTM cell, the fed-back vector, the last alignment)
  // keeps rows `keep`, moved to the front in place (`keep` ascends, so no row is overwritten
  // before it is read), and goes on as a view of n rows; the views are the new encoding, taken
  // before the mark the steps rewind to. No copy of the memory and no new encoding.
  bool drop_rows(std::span<const int32_t> keep) override {
    if (state_.t() > 0) RnnSeq2Seq::recycle(g_, encoded_, state_);  // the last step's nodes
    const auto n = static_cast<int64_t>(keep.size());
    std::vector<const float*> moved;  // storage already compacted (a projection may be the memory)
    auto keep_rows = [&](Tensor& t) {
      if (t.data() == nullptr) return;
      Shape shape = t.shape();
      const int64_t width = shape.inner(0);
      if (std::find(moved.begin(), moved.end(), t.data()) == moved.end()) {
        kernels::keep_rows(t.data(), width, width, keep);
        moved.push_back(t.data());
      }
      shape[0] = n;
      t = Tensor::view(t.data(), shape);
    };
    auto keep_var_rows = [&](Var* v) {
      if (!v->valid()) return;
      Tensor t = v->value();
      keep_rows(t);
      *v = g_.constant(t);
    };
    AttentionState& a = state_.attention;
    for (Var* v : {&a.memory.annotations, &a.keys, &a.chunk_keys, &state_.mix_keys})
      keep_var_rows(v);                                // made once per batch
    for (Var* v : state_.carried()) keep_var_rows(v);  // what each step makes
    keep_rows(a.memory.mask);
    const std::vector<int32_t> lengths(a.memory.lengths.begin(), a.memory.lengths.end());
    lengths_.resize(static_cast<size_t>(n));  // (a.memory.lengths may be lengths_ itself)
    for (int64_t r = 0; r < n; ++r) lengths_[r] = lengths[keep[r]];
    a.memory.lengths = lengths_;
    retakable_ = false;
    encoded_ = g_.mark();
    return true;
  }

  // The state (s, the LSTM cell, the fed-back vector, the last alignment, the step) outlives a new
  // encoding of the longer source; the alignment gets 0 at the positions added.
  bool extend_source(const Seq2SeqBatch& longer, bool retake) override {
    check(longer.B * rows_per_source_ == state_.rnn.h.dim(0), "extend_source: ", longer.B,
          " sources for ", state_.rnn.h.dim(0), " rows");
    restart(retake, [&] {
      return model_.start(g_, longer.src, longer.S, longer.src_lengths, rows_per_source_);
    });
    return true;
  }

  // A decoder over a stream's memory as heard so far (HeardMemory, below); more of it heard,
  // or its front let go: extend_heard(), as extend_source.
  RnnDecoder(const RnnSeq2Seq& model, Graph& g, HeardMemory& heard)
      : model_(model),
        g_(g),
        start_(g.mark()),
        state_(model.start_heard(g, heard.state(g))),
        encoded_(g.mark()),
        rows_per_source_(1),
        weights_(true),
        distribution_(false) {}
  // `scan` >= 0 (monotonic attention, its memory's front let go): the next step's scan starts
  // at memory position `scan`, its previous alignment one-hot there (all 0 at or past the end:
  // nothing is attended again)
  void extend_heard(HeardMemory& heard, bool retake, int64_t scan) {
    restart(retake, [&] { return model_.start_heard(g_, heard.state(g_)); });
    if (scan < 0) return;
    const int64_t S = state_.attention.memory.mask.shape().dim(1);
    Tensor previous = g_.zeros(Shape{1, S});
    if (scan < S) previous.data()[scan] = 1.f;
    state_.attention.previous = g_.constant(previous);
  }
  // Monotonic attention: the memory position the last step stopped on, -1 when it ran off.
  int64_t stop() const {
    const Var& previous = state_.attention.previous;
    if (!previous.valid()) return -1;
    const int64_t S = previous.dim(1);
    const int64_t j = vmath::first_at_least(previous.value().data(), S, 0.5f);
    return j < S ? j : -1;
  }

 private:
  // The old encoding and everything since freed, a new one started, the state (or the one before
  // its last step) carried into it.
  template <class Start>
  void restart(bool retake, Start start) {
    check(!retake || retakable_, "extend_source: no step to take back");
    const Saved saved(retake ? before_ : state_);
    retakable_ = false;
    g_.rewind(start_, {});
    state_ = start();
    state_.attention.distribution = distribution_;
    if (saved.step > 0) saved.restore(g_, state_);  // else: the new start is the state
    encoded_ = g_.mark();
  }

  // A decoder state's values, copied out of the graph.
  struct Saved {
    int64_t step = 0;
    Tensor h, c, feed, previous;
    explicit Saved(const RnnSeq2Seq::DecoderState& st) : step(st.t()) {
      auto copy = [](const Var& v) { return v.valid() ? v.value().clone() : Tensor(); };
      h = copy(st.rnn.h);
      c = copy(st.rnn.c);
      feed = copy(st.feed);
      previous = copy(st.attention.previous);
    }
    // Into `st`, a state started on a longer source: previous [B, S] -> [B, S'] with 0 at the
    // positions added.
    void restore(Graph& g, RnnSeq2Seq::DecoderState& st) const {
      auto var = [&g](const Tensor& t) { return t.data() != nullptr ? g.constant(t) : Var(); };
      st.rnn.h = var(h);
      st.rnn.c = var(c);
      st.feed = var(feed);
      st.attention.step = step;
      if (previous.data() == nullptr) return;
      const int64_t B = previous.shape().dim(0), S = previous.shape().dim(1);
      const int64_t S2 = st.attention.memory.mask.shape().dim(1);
      Tensor wider = g.zeros(Shape{B, S2});
      for (int64_t b = 0; b < B; ++b)  // (a stream's memory may have let its front go: S2 < S)
        std::copy_n(previous.data() + b * S, std::min(S, S2), wider.data() + b * S2);
      st.attention.previous = g.constant(wider);
    }
  };

  const RnnSeq2Seq& model_;
  Graph& g_;
  Graph::Mark start_;  // before the encoding: extend_source() frees it all and encodes again
  RnnSeq2Seq::DecoderState state_;
  Graph::Mark encoded_;
  int64_t rows_per_source_;
  bool weights_, distribution_;
  RnnSeq2Seq::DecoderState before_;  // monotonic attention: the state before the last step,
  bool retakable_ = false;           // valid until the next step or extension
  std::vector<int32_t> lengths_;     // the source lengths of the rows kept by drop_rows()
};

// Monotonic attention over a stream (AttentionStream): the listener's states as they come, the
// decoder writing while its attention stops on a position heard. A step that runs off them
// waits for more audio and is taken again over the longer memory (RnnDecoder::extend_heard: the
// decoder's state carried, the memory's views made again).
// Linear time and flat memory (Raffel et al. 2017, §2.2): each position's keys are made once, as
// it is heard (HeardMemory); a step scans from the last stop, and a step taken again from where
// it ran off (the positions before had p_ij < 1/2 under the same query); and positions behind
// the scan's start less MoChA's chunk (w - 1) are never read again, so they are let go.
// Segments (endpoint > 0): a segment ends when the decoder writes </s> before the audio ends, or
// once `endpoint` positions were heard past its last unit's stop (its waiting step taken to be
// its </s>; a decoder that writes on while its attention stays put is looping); the next decoder
// starts after it, on a new memory.
// Joint CTC-MoChA (a CTC head, and a lookahead D >= 0; models/joint_ctc_decoder.h): each
// position heard also goes through the CTC head into the segment's prefix chain (kernels/
// ctc_prefix.h), and a step whose stop j has fewer than D positions heard after it waits as one
// that ran off does.
// Wait-k on audio (--wait-k k, chunks of C positions): output i is written once (i + k) C
// positions of its segment are heard, or the audio has ended; its attention reads those only
// (all of them: its memory is the segment's).
class RnnAttentionStream final : public AttentionStream {
 public:
  RnnAttentionStream(const RnnSeq2Seq& model, const AudioFrontEnd& front,
                     const SequenceEncoder& encoder, int64_t slack, int64_t endpoint,
                     const JointCtcHead* ctc, float lambda, int64_t lookahead)
      : model_(model),
        listener_(front, encoder),
        D_(listener_.width()),
        slack_(slack),
        endpoint_(endpoint),
        monotonic_(model.config().monotonic()),
        window_(model.config().attention == AttentionKind::Mocha
                    ? model.config().monotonic_attention.chunk
                    : 1),
        wait_k_(model.config().wait_k),
        wait_chunk_(std::max<int64_t>(model.config().wait_k_chunk, 1)),
        memory_(model),
        origin_(g_.mark()),
        ctc_(ctc),
        lambda_(lambda),
        lookahead_(lookahead),
        chain_(model.tgt_vocab(), Vocab::kPad),
        joint_(static_cast<size_t>(model.tgt_vocab())),
        psi_(joint_.size()) {}
  std::vector<Token> push(std::span<const float> features) override {
    return take(listener_.push(features), false);
  }
  std::vector<Token> finish() override { return take(listener_.finish(), true); }
  int64_t positions() const override { return listener_.positions(); }
  int64_t held() const override { return memory_.size(); }

 private:
  int64_t heard() const { return memory_.end(); }
  // the segment's </s> where no step wrote it (the endpoint, the length limit, a pause's tail):
  // at the last position heard, scored 0
  Token ended_here() const {
    return {.id = Vocab::kEos, .stop = heard() - 1, .heard = heard(), .log_prob = 0.f};
  }
  // The states of the positions just heard [n, D], and what they let the decoder write. With an
  // endpoint, a position at a time, so that where a segment ends does not depend on how the
  // audio was cut (without one, the units never do: a step waits for what it reads).
  std::vector<Token> take(const std::vector<float>& h, bool end) {
    if (endpoint_ == 0) {
      hear(h);
      return write(end);
    }
    std::vector<Token> out;
    auto keep = [&out](const std::vector<Token>& y) { out.insert(out.end(), y.begin(), y.end()); };
    for (size_t j = 0; j < h.size(); j += static_cast<size_t>(D_)) {
      hear({h.begin() + static_cast<ptrdiff_t>(j), h.begin() + static_cast<ptrdiff_t>(j) + D_});
      keep(write(false));
    }
    if (end) keep(write(true));
    return out;
  }
  void hear(std::span<const float> h) {
    if (done_) return;  // (one segment, ended: the rest is not read)
    memory_.append(h, D_);
    grown_ = grown_ || !h.empty();
    if (ctc_) chain_.push(ctc_->log_probs(h, D_));
  }

  std::vector<Token> write(bool end) {
    std::vector<Token> out;
    while (!done_) {
      if (decode(end, out)) {
        out.push_back(eos_);
        if (endpoint_ == 0 || end) {
          done_ = true;
          break;
        }
        // </s> before the audio's end: a new segment on the positions after its stop
        next_segment(eos_.stop + 1);
        continue;
      }
      // the endpoint: `endpoint_` positions heard past the last unit's stop (the step waiting
      // is taken to be the segment's </s>). Units written at a stop that does not move for that
      // long end the segment too: a decoder repeating itself while its attention stays put
      if (endpoint_ == 0 || last_stop_ < 0 || heard() - (last_stop_ + 1) < endpoint_) break;
      out.push_back(ended_here());
      next_segment(heard());
    }
    return out;
  }

  // The segment's decoder writes what the positions heard let it (all of them when `end`: its
  // audio ends there); its units go to `out`. True when it wrote </s> (or reached the length
  // limit at the end), eos_ then that token.
  bool decode(bool end, std::vector<Token>& out) {
    const int64_t S = heard() - seg_start_;  // the segment's positions heard
    if (S == 0) return false;
    if (waiting_ && !grown_ && !end) return false;  // it would run off again
    if (!decoder_) {
      decoder_ = std::make_unique<RnnDecoder>(model_, g_, memory_);
    } else if (grown_ || retake_) {
      // monotonic attention reads nothing before its scan's start less the chunk
      if (monotonic_) memory_.drop_before(std::max(seg_start_, scan_ - (window_ - 1)));
      decoder_->extend_heard(memory_, retake_, monotonic_ ? scan_ - memory_.first() : -1);
    }
    grown_ = waiting_ = retake_ = false;
    const int64_t M = memory_.size(), V = model_.tgt_vocab();
    while (true) {
      const int64_t i = seg_tokens_;
      if (i >= S + slack_) {  // the length limit
        if (end) {
          eos_ = ended_here();
          return true;
        }
        waiting_ = true;  // (more audio raises it)
        return false;
      }
      // wait-k: output i reads the first (i + k) chunks, all of them heard first
      if (wait_k_ > 0 && !end && S < (i + wait_k_) * wait_chunk_) {
        waiting_ = true;
        return false;
      }
      const int32_t prev = i == 0 ? Vocab::kBos : last_;
      const IncrementalDecoder::Step s = decoder_->step({&prev, 1}, Scores::LogProbs);
      // a segment after the first that ends before its attention stopped anywhere: a pause's
      // tail, nothing said
      if (s.ran_off && end && i == 0 && seg_start_ > 0) {
        eos_ = ended_here();
        return true;
      }
      // past what was heard (the attention, or joint CTC's lookahead): wait, and take this
      // step again (from where its scan ran off)
      const float* scores = s.ran_off && !end ? nullptr : ctc_ ? joint(s, M, S, end) : s.scores;
      if (scores == nullptr) {
        waiting_ = retake_ = true;
        if (s.ran_off && monotonic_) scan_ = heard();
        return false;
      }
      const auto best =
          static_cast<int32_t>(Vocab::kEos + vmath::argmax(scores + Vocab::kEos, V - Vocab::kEos));
      const int64_t stop = memory_.first() + attended_position({s.weights, static_cast<size_t>(M)});
      const Token token{.id = best, .stop = stop, .heard = heard(), .log_prob = scores[best]};
      if (best == Vocab::kEos) {
        eos_ = token;
        return true;
      }
      ++seg_tokens_;
      last_ = best;
      last_stop_ = stop;
      if (monotonic_) {  // the next step scans from this one's stop
        const int64_t j = decoder_->stop();
        scan_ = j < 0 ? heard() : memory_.first() + j;
      }
      if (ctc_) chain_.extend(best);
      out.push_back(token);
    }
  }

  // A new segment from position p (heard or not yet): a new decoder, memory and prefix chain.
  void next_segment(int64_t p) {
    decoder_.reset();
    g_.rewind(origin_, {});
    memory_.drop_before(p);
    seg_start_ = scan_ = p;
    seg_tokens_ = 0;
    last_stop_ = -1;
    grown_ = waiting_ = retake_ = false;
    if (ctc_) {
      chain_ = kernels::CtcPrefixChain(model_.tgt_vocab(), Vocab::kPad);
      chain_.push(ctc_->log_probs(memory_.states(), D_));
    }
  }

  // Joint CTC-MoChA: the step's joint scores into joint_, or nullptr when CTC would read past
  // the positions heard (wait). M: the memory's positions, S: the segment's heard.
  const float* joint(const IncrementalDecoder::Step& s, int64_t M, int64_t S, bool end) {
    const int64_t stop = attention_stop(s.weights, M);  // -1: ran off (at the end)
    int64_t tau = stop < 0 ? S : memory_.first() + stop - seg_start_ + 1 + lookahead_;
    if (tau > S) {
      if (!end) return nullptr;
      tau = S;
    }
    chain_.scores(tau, Vocab::kEos, psi_);
    const float psi_g = chain_.psi(tau);
    if (tau == S && !end) {  // whether the audio ends at tau is not known yet
      joint_scores(s.scores, psi_, psi_g, lambda_, Vocab::kPad, joint_);
      if (vmath::argmax(joint_.data() + Vocab::kEos,
                        static_cast<int64_t>(joint_.size()) - Vocab::kEos) == 0)
        return nullptr;  // it would end: wait for more audio, or the end
    }
    if (tau < S || !end) psi_[Vocab::kEos] = -std::numeric_limits<float>::infinity();
    joint_scores(s.scores, psi_, psi_g, lambda_, Vocab::kPad, joint_);
    return joint_.data();
  }

  const RnnSeq2Seq& model_;
  AudioEncoderStream listener_;
  int64_t D_, slack_, endpoint_;
  bool monotonic_;               // hard monotonic stops (else wait-k's soft attention)
  int64_t window_;               // what a stop reads back: MoChA's chunk w, else 1
  int64_t wait_k_, wait_chunk_;  // wait-k (0: monotonic attention's stops decide)
  HeardMemory memory_;
  Graph g_{Mode::Inference};
  Graph::Mark origin_;  // before the segment's decoder
  std::unique_ptr<RnnDecoder> decoder_;
  // the segment
  int64_t seg_start_ = 0;   // its first position
  int64_t seg_tokens_ = 0;  // units written
  int32_t last_ = 0;        // the last of them
  int64_t last_stop_ = -1;  // its stop (-1: none yet)
  int64_t scan_ = 0;        // monotonic: where the next step's scan starts
  Token eos_;               // how it ended
  bool grown_ = false;      // heard more since the decoder last saw the memory
  bool waiting_ = false;    // for more audio: the last step ran off it, or the length limit
  bool retake_ = false;     // the last step ran off: taken again once more is heard
  bool done_ = false;       // the last segment ended (one segment: </s> written)
  // joint CTC-MoChA (ctc_ null: attention alone)
  const JointCtcHead* ctc_;
  float lambda_;
  int64_t lookahead_;
  kernels::CtcPrefixChain chain_;   // the written tokens' prefix over the segment's positions
  std::vector<float> joint_, psi_;  // [V] a step's joint scores; CTC's prefix scores
};

}  // namespace

std::unique_ptr<AttentionStream> RnnSeq2Seq::attention_stream(int64_t slack,
                                                              int64_t endpoint) const {
  check(front_ != nullptr, "rnn: only a recognizer (audio in) reads a stream");
  check(config_.monotonic() || config_.wait_k > 0, "rnn: ", attention_name(config_.attention),
        " attention reads the whole utterance before its first output; a streaming recognizer "
        "attends with --attention monotonic or mocha, or reads by --wait-k");
  // joint CTC-MoChA when asked for (--ctc-lookahead) at a weight above 0
  const bool joint = ctc_ && config_.ctc_decode_lookahead >= 0 && config_.joint_decode_weight() > 0;
  return std::make_unique<RnnAttentionStream>(
      *this, *front_, *encoder_, slack, endpoint, joint ? &*ctc_ : nullptr,
      config_.joint_decode_weight(), config_.ctc_decode_lookahead);
}

std::unique_ptr<IncrementalDecoder> RnnSeq2Seq::start_decoding(Graph& g, const Seq2SeqBatch& b,
                                                               int64_t /*max_len*/,
                                                               const AttentionChoice& a,
                                                               int64_t rows_per_source) const {
  // joint CTC-MoChA reads each step's stop from its weights
  AttentionChoice choice = a;
  if (ctc_ && config_.ctc_decode_lookahead >= 0) choice.wanted = true;
  auto decoder = std::make_unique<RnnDecoder>(*this, g, b, choice, rows_per_source);
  // joint CTC-attention decoding; at weight 0 the attention's scores alone, without the CTC
  // prefix scores the wrapper would compute and not use
  if (!ctc_ || config_.joint_decode_weight() == 0.f) return decoder;
  const Memory& m = decoder->memory();
  const Var annotations = m.annotations;
  const std::span<const int32_t> lengths = m.lengths;
  return ctc_->decoder(std::move(decoder), annotations, lengths, config_.joint_decode_weight(),
                       config_.ctc_decode_lookahead);
}

}  // namespace heed
