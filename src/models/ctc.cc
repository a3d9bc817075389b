// The CTC sequence labeller (equations in the header).
// Leaves out: search (decode/ctc_search.cc) and training loops (train/).
#include "heed/models/ctc.h"

#include <algorithm>
#include <cmath>

#include "heed/autograd/ops.h"
#include "heed/autograd/ops/ctc.h"
#include "heed/data/vocab.h"
#include "heed/models/model_options.h"
#include "heed/nn/audio_encoder_stream.h"
#include "heed/util/error.h"
#include "heed/util/json.h"

namespace heed {

static_assert(CtcModel::kBlank == Vocab::kPad, "the blank is the id no target holds");

nlohmann::json CtcConfig::to_json() const {
  nlohmann::json j = {{"model", kFamily}};
  encoder_to_json(encoder, j);
  j["tgt_vocab"] = tgt_vocab;
  j["upsample"] = upsample;
  if (lookahead > 0) j["lookahead"] = lookahead;
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
  c.lookahead = o.lookahead;
  if (auto* tf = std::get_if<TransformerEncoderConfig>(&c.encoder)) {
    // a chunked encoder reads ahead in its attention, not in the output layer
    check(o.lookahead == 0 || o.encoder_chunk > 0,
          "ctc: --lookahead with --encoder transformer is the chunked attention's; give "
          "--encoder-chunk");
    tf->layer.lookahead = o.encoder_chunk > 0 ? o.lookahead : 0;
    if (o.encoder_chunk > 0) c.lookahead = 0;
  }
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
    c.lookahead = j.value("lookahead", int64_t{0});
    c.dropout = j.at("dropout").get<float>();
    if (j.contains("audio")) c.audio = AudioFrontEndConfig::from_json(j.at("audio"));
  } catch (const nlohmann::json::exception& e) {
    fail("config.json: malformed ctc model config (", e.what(), ")");
  }
  check(c.upsample >= 1 && c.upsample <= 64, "config.json: ctc upsample must be in 1..64, got ",
        c.upsample);
  check(c.lookahead >= 0 && c.lookahead <= 32, "config.json: ctc lookahead must be in 0..32, got ",
        c.lookahead);
  if (auto* rnn = std::get_if<RnnEncoderConfig>(&c.encoder)) rnn->dropout = c.dropout;
  if (c.audio) c.set_audio(*c.audio);
  return c;
}

std::string CtcConfig::describe() const {
  const std::string enc =
      heed::describe(encoder) +
      (lookahead > 0 ? ", lookahead " + std::to_string(lookahead) : std::string());
  if (audio) return "ctc, " + audio->describe() + ", " + enc;
  return "ctc, " + enc + ", upsample " + std::to_string(upsample);
}

void CtcConfig::set_vocabularies(int64_t src, int64_t tgt) {
  if (!audio) set_vocab_size(encoder, src);
  tgt_vocab = tgt;
}

void CtcConfig::set_audio(const AudioFrontEndConfig& front) {
  auto* rnn = std::get_if<RnnEncoderConfig>(&encoder);
  auto* tf = std::get_if<TransformerEncoderConfig>(&encoder);
  check(rnn != nullptr || tf != nullptr,
        "ctc: a speech recognizer's encoder is an rnn or a transformer (--encoder rnn | "
        "transformer), not ",
        heed::describe(encoder));
  check(upsample == 1, "ctc: a speech recognizer has more frames than labels (--upsample 1, got ",
        upsample, ")");
  audio = front;
  // no table: the front end's vectors, as wide as the embeddings were (--embed) or d_model
  if (rnn) {
    rnn->vocab = 0;
    audio->dim = rnn->embed;
  } else {
    tf->vocab = 0;
    audio->dim = tf->layer.d_model;
  }
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
  out_W_ = &scope.param("out/W", {V, (c.lookahead + 1) * D},
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
  Var h = encoder_->encode(g, ids, K * S, frame_lengths, {}).states;  // [B, K S, D]
  return output(g, h, frame_lengths);                                 // [B, K S, V]
}

Var CtcModel::output(Graph& g, Var h, std::span<const int32_t> lengths) const {
  const int64_t N = config_.lookahead;
  if (N > 0) {
    // [h_t ; h_{t+1} ; ... ; h_{t+N}]: h shifted by j, zeros past the end (and past each row's
    // length: the encoders leave padding's states at 0, and a state past the length is read
    // as one; so that it is, they are zeroed here too)
    const int64_t B = h.dim(0), T = h.dim(1), D = h.dim(2);
    bool padded = false;
    for (int32_t n : lengths) padded = padded || n < T;
    if (padded) {
      Tensor mask = g.alloc(Shape{B, T, 1});
      for (int64_t b = 0; b < B; ++b)
        for (int64_t t = 0; t < T; ++t) mask.data()[b * T + t] = t < lengths[b] ? 1.f : 0.f;
      h = mul(h, g.constant(mask));
    }
    std::vector<Var> shifted = {h};
    for (int64_t j = 1; j <= N; ++j) {
      const int64_t keep = std::max<int64_t>(T - j, 0);
      Var zeros = g.constant(g.zeros(Shape{B, std::min(j, T), D}));
      shifted.push_back(keep > 0 ? concat({slice(h, 1, j, keep), zeros}, 1) : zeros);
    }
    h = concat(shifted, 2);  // [B, T, (N + 1) D]
  }
  return linear(dropout(h, config_.dropout), g.param(*out_W_), g.param(*out_b_));  // [B, T, V]
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
  Var x = front_->forward(g, b.features, b.S, b.src_lengths, frame_lengths);  // [S', B, D]
  Var h = encoder_->encode_vectors(g, x, frame_lengths, {}).states;           // [B, S', H]
  return output(g, h, frame_lengths);                                         // [B, S', V]
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

// A recognizer's positions as its frames arrive: the listener's stream (nn/audio_encoder_stream.h)
// gives each position's state once its front end's window is whole; the states join `held_`,
// the states from the next position to give out on: a position is given out (the output layer,
// the log-softmax) once the N states it reads ahead are there, and finish() gives out the last N
// with zeros after them, as the whole utterance's output layer reads them.
std::unique_ptr<FrameLabeller::Stream> CtcModel::Labeller::stream() const {
  check(m_.front_ != nullptr, "ctc: only a recognizer (audio in) reads a stream");
  class AudioStream final : public Stream {
   public:
    explicit AudioStream(const CtcModel& m)
        : m_(m), listener_(*m.front_, *m.encoder_), D_(listener_.width()) {}
    std::vector<float> push(std::span<const float> features) override {
      const std::vector<float> h = listener_.push(features);
      held_.insert(held_.end(), h.begin(), h.end());
      return give(false);
    }
    std::vector<float> finish() override {
      const std::vector<float> h = listener_.finish();
      held_.insert(held_.end(), h.begin(), h.end());
      return give(true);
    }
    int64_t positions() const override { return positions_; }

   private:
    // the log-probabilities [m, V] of the held positions whose lookahead is there (all of them
    // at the end); held_ keeps the states the next positions read
    std::vector<float> give(bool end) {
      const int64_t N = m_.config_.lookahead, rows = static_cast<int64_t>(held_.size()) / D_;
      const int64_t m = end ? rows : std::max<int64_t>(rows - N, 0);
      if (m == 0) return {};
      g_.clear();
      const auto n32 = static_cast<int32_t>(rows);
      Var h = g_.input(Shape{1, rows, D_}, held_);
      Var y = log_softmax(m_.output(g_, h, {&n32, 1}));  // [1, rows, V]
      const int64_t V = y.dim(2);
      std::vector<float> out(y.value().data(), y.value().data() + m * V);
      held_.erase(held_.begin(), held_.begin() + m * D_);
      positions_ += m;
      return out;
    }
    const CtcModel& m_;
    AudioEncoderStream listener_;
    int64_t D_;
    Graph g_{Mode::Inference};
    std::vector<float> held_;  // [rows, D]: the states from position positions_ on
    int64_t positions_ = 0;
  };
  return std::make_unique<AudioStream>(m_);
}

}  // namespace heed
