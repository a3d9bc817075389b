// The CTC sequence labeller (equations in the header).
// Leaves out: search (decode/ctc_search.cc) and training loops (train/).
#include "heed/models/ctc.h"

#include <algorithm>
#include <cmath>

#include "heed/autograd/ops.h"
#include "heed/autograd/ops/ctc.h"
#include "heed/data/vocab.h"
#include "heed/models/model_options.h"
#include "heed/util/error.h"
#include "heed/util/json.h"

namespace heed {

static_assert(CtcModel::kBlank == Vocab::kPad, "the blank is the id no target holds");

nlohmann::json CtcConfig::to_json() const {
  nlohmann::json j = {{"model", kFamily}};
  encoder_to_json(encoder, j);
  j["tgt_vocab"] = tgt_vocab;
  j["upsample"] = upsample;
  j["dropout"] = json_number(dropout);
  if (audio) j["audio"] = audio->to_json();
  return j;
}

// A 2-layer BiLSTM (whatever --cell and --layers say otherwise) or the --encoder given.
CtcConfig CtcConfig::configure(const ModelOptions& o) {
  refuse_wait_k(o, "a ctc model has no decoder to wait");
  refuse_syntactic_attention(o, kFamily);
  CtcConfig c;
  c.encoder = sequence_encoder(o, std::get<RnnEncoderConfig>(c.encoder));
  c.upsample = o.upsample;
  c.dropout = o.dropout.value_or(c.dropout);
  check_monotonic_options(o, false, false);
  return c;
}

CtcConfig CtcConfig::from_json(const nlohmann::json& j) {
  CtcConfig c;
  try {
    check(j.at("model").get<std::string>() == kFamily, "config.json: not a ctc model");
    c.encoder = encoder_from_json(j);
    c.tgt_vocab = j.at("tgt_vocab").get<int64_t>();
    c.upsample = j.at("upsample").get<int64_t>();
    c.dropout = j.at("dropout").get<float>();
    if (j.contains("audio")) c.audio = AudioFrontEndConfig::from_json(j.at("audio"));
  } catch (const nlohmann::json::exception& e) {
    fail("config.json: malformed ctc model config (", e.what(), ")");
  }
  check(c.upsample >= 1 && c.upsample <= 64, "config.json: ctc upsample must be in 1..64, got ",
        c.upsample);
  if (auto* rnn = std::get_if<RnnEncoderConfig>(&c.encoder)) rnn->dropout = c.dropout;
  if (c.audio) c.set_audio(*c.audio);
  return c;
}

std::string CtcConfig::describe() const {
  const std::string enc = heed::describe(encoder);
  if (audio) return "ctc, " + audio->describe() + ", " + enc;
  return "ctc, " + enc + ", upsample " + std::to_string(upsample);
}

void CtcConfig::set_vocabularies(int64_t src, int64_t tgt) {
  if (!audio) set_vocab_size(encoder, src);
  tgt_vocab = tgt;
}

void CtcConfig::set_audio(const AudioFrontEndConfig& front) {
  auto* rnn = std::get_if<RnnEncoderConfig>(&encoder);
  check(rnn != nullptr, "ctc: a speech recognizer's encoder is a birnn (--encoder birnn), not ",
        heed::describe(encoder));
  check(upsample == 1, "ctc: a speech recognizer has more frames than labels (--upsample 1, got ",
        upsample, ")");
  rnn->vocab = 0;  // no table: the front end's vectors, as wide as the embeddings were (--embed)
  audio = front;
  audio->dim = rnn->embed;
}

CtcModel::CtcModel(const CtcConfig& c, const Scope& scope)
    : config_(c),
      front_(c.audio ? std::make_unique<AudioFrontEnd>(*c.audio, scope) : nullptr),
      encoder_(make_sequence_encoder(c.encoder, scope)) {
  check(c.tgt_vocab > Vocab::kUnk + 1, "ctc model: empty target vocabulary");
  check(c.upsample >= 1, "ctc model: upsample must be >= 1, got ", c.upsample);
  const int64_t D = encoder_->width(), V = c.tgt_vocab;
  // the output layer starts as the encoder's cells do: Glorot, or Torch's U(-1/sqrt(D), 1/sqrt(D))
  const auto* rnn = std::get_if<RnnEncoderConfig>(&c.encoder);
  out_W_ = &scope.param("out/W", {V, D},
                        rnn && rnn->init == RnnInit::Uniform
                            ? Init::uniform(1.f / std::sqrt(static_cast<float>(D)))
                            : Init::glorot_uniform());
  out_b_ = &scope.param("out/b", {V}, Init::zeros());
}

Var CtcModel::frame_logits(Graph& g, std::span<const int32_t> src, int64_t S,
                           std::span<const int32_t> lengths,
                           std::span<int32_t> frame_lengths) const {
  const int64_t K = config_.upsample, B = static_cast<int64_t>(lengths.size());
  // x': source position s becomes positions s K .. s K + K - 1 (time-major [K S * B])
  std::span<const int32_t> ids = src;
  if (K > 1) {
    const auto n = static_cast<size_t>(K * S * B);
    int32_t* up = g.arena().array<int32_t>(n);
    for (int64_t s = 0; s < S; ++s)
      for (int64_t j = 0; j < K; ++j) std::copy_n(src.data() + s * B, B, up + (s * K + j) * B);
    ids = {up, n};
  }
  for (int64_t b = 0; b < B; ++b) frame_lengths[b] = static_cast<int32_t>(K * lengths[b]);
  Var h = encoder_->encode(g, ids, K * S, frame_lengths, {}).states;               // [B, K S, D]
  return linear(dropout(h, config_.dropout), g.param(*out_W_), g.param(*out_b_));  // [B, KS, V]
}

Var CtcModel::frame_logits(Graph& g, const Seq2SeqBatch& b,
                           std::span<int32_t> frame_lengths) const {
  if (b.F == 0) {
    check(!front_, "ctc: this recognizer reads audio (frames), not token ids");
    return frame_logits(g, b.src, b.S, b.src_lengths, frame_lengths);
  }
  check(front_ != nullptr, "ctc: this model reads token ids, not audio");
  check(b.F == front_->config().features, "ctc: frames of ", b.F, " bins for a model of ",
        front_->config().features);
  Var x = front_->forward(g, b.features, b.S, b.src_lengths, frame_lengths);       // [S', B, D]
  Var h = encoder_->encode_vectors(g, x, frame_lengths, {}).states;                // [B, S', H]
  return linear(dropout(h, config_.dropout), g.param(*out_W_), g.param(*out_b_));  // [B, S', V]
}

Var CtcModel::loss(Graph& g, const Seq2SeqBatch& b, float /*label_smoothing*/) const {
  const auto nB = static_cast<size_t>(b.B);
  int32_t* frames = g.arena().array<int32_t>(nB);
  const CtcTargets y = ctc_targets(g, b);  // tgt_out without <eos>
  Var logits = frame_logits(g, b, {frames, nB});
  Var nll = ctc_loss(logits, {frames, nB}, y.labels, y.lengths,
                     {.blank = kBlank, .reduction = Reduction::Sum, .zero_infinity = true});
  return affine(nll, 1.f / static_cast<float>(std::max<int64_t>(b.target_tokens, 1)), 0.f);
}

std::unique_ptr<IncrementalDecoder> CtcModel::start_decoding(Graph& /*g*/,
                                                             const Seq2SeqBatch& /*batch*/,
                                                             int64_t /*max_len*/,
                                                             const AttentionChoice& /*attention*/,
                                                             int64_t /*rows_per_source*/) const {
  fail(
      "a ctc model has no decoder: its labels are read off every position at once "
      "(decode/ctc_search.h)");
}

FrameScores CtcModel::Labeller::frame_log_probs(Graph& g, const Seq2SeqBatch& b) const {
  FrameScores out;
  out.lengths.resize(static_cast<size_t>(b.B));
  out.log_probs = log_softmax(m_.frame_logits(g, b, out.lengths));
  return out;
}

}  // namespace heed
