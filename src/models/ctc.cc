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

namespace {
// A front end position's window of frames, and the frames between two positions' windows
constexpr int64_t kWindow = AudioFrontEndConfig::kMinFrames, kStride = 4;
}  // namespace

// A recognizer's positions as its frames arrive. Position j of the front end reads frames
// 4j .. 4j + 6 (two 3x3 convolutions of stride 2, no padding); `pending_` holds the frames from
// 4 next on, so each push runs the front end over the windows it completes (3 frames of
// overlap), the encoder's stream over their vectors, the output layer and the log-softmax.
std::unique_ptr<FrameLabeller::Stream> CtcModel::Labeller::stream() const {
  check(m_.front_ != nullptr, "ctc: only a recognizer (audio in) reads a stream");
  check(!m_.front_->config().utterance_mean,
        "ctc: this recognizer subtracts each utterance's mean (--utterance-mean), which needs "
        "the whole utterance before its first frame; a streaming one is trained without it");
  class AudioStream final : public Stream {
   public:
    explicit AudioStream(const CtcModel& m)
        : m_(m), F_(m.front_->config().features), encoder_(m.encoder_->stream_vectors()) {}
    std::vector<float> push(std::span<const float> features) override {
      check(static_cast<int64_t>(features.size()) % F_ == 0, "ctc stream: ", features.size(),
            " values are not frames of ", F_, " bins");
      pending_.insert(pending_.end(), features.begin(), features.end());
      const int64_t S = frames(), n = S < kWindow ? 0 : (S - kWindow) / kStride + 1;
      if (n == 0) return {};
      std::vector<float> out = run(S, (n - 1) * kStride + kWindow);
      pending_.erase(pending_.begin(), pending_.begin() + n * kStride * F_);
      return out;
    }
    std::vector<float> finish() override {
      std::vector<float> out;
      const int64_t S = frames();
      if (positions_ == 0 && S > 0) {  // shorter than a window: zero frames after it, as offline
        pending_.resize(static_cast<size_t>(kWindow * F_), 0.f);
        out = run(S, kWindow);
      }
      pending_.clear();
      return out;
    }
    int64_t positions() const override { return positions_; }

   private:
    int64_t frames() const { return static_cast<int64_t>(pending_.size()) / F_; }
    // the front end over pending_'s first `span` frames (`real` of them audio) -> [n, V]
    std::vector<float> run(int64_t real, int64_t span) {
      g_.clear();
      const int32_t length = static_cast<int32_t>(std::min(real, span));
      int32_t out_length = 0;
      Var x = m_.front_->forward(g_, {pending_.data(), static_cast<size_t>(span * F_)}, span,
                                 {&length, 1}, {&out_length, 1});                  // [n, 1, D]
      Var h = encoder_->push(g_, x);                                               // [1, n, H]
      Var y = log_softmax(linear(h, g_.param(*m_.out_W_), g_.param(*m_.out_b_)));  // [1, n, V]
      positions_ += y.dim(1);
      return {y.value().data(), y.value().data() + y.value().numel()};
    }
    const CtcModel& m_;
    int64_t F_;
    std::unique_ptr<SequenceEncoder::Stream> encoder_;
    Graph g_{Mode::Inference};
    std::vector<float> pending_;  // [frames, F]: from frame 4 positions_ on
    int64_t positions_ = 0;
  };
  return std::make_unique<AudioStream>(m_);
}

}  // namespace heed
