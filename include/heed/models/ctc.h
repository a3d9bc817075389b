// The CTC sequence labeller (Graves et al. 2006; seed 003 §2.3.2; `heed train --model ctc`):
//   x' = each source unit repeated K times (--upsample K: a word can have more phones than
//        letters, X -> EH K S, and CTC emits at most one label per position)
//   h  = Encoder(x')                   [B, K S, D]   any sequence encoder (nn/sequence_encoder.h)
//   y  = softmax(W Dropout(h) + b)     [B, K S, V]   per position, over the target vocabulary
// or, with a lookahead of N positions (Amodei et al. 2016, "Deep Speech 2", section 3.5: what
// lets a forward-only recognizer see a little of its future, and stream N positions later),
//   y_t = softmax(sum_{j=0..N} W_j h_{t+j} + b)   (h_{t+j} = 0 past the sequence's end)
//       = softmax(W [h_t ; h_{t+1} ; ... ; h_{t+N}] + b),  W [V, (N + 1) D]
// where class 0 (the padding id, which no target holds) is CTC's blank. A speech recognizer
// (Graves et al. 2006's own task; the seed's BiLSTM-CTC) reads log-mel frames instead of ids:
//   x' = FrontEnd(frames)              [K=1, S/4, B, D]  nn/audio_front_end.h, then the encoder
// as above on its vectors. Training minimises
// -log p(l | x), the sum over every alignment (autograd/ops/ctc.h); there is no decoder, and so
// no attention: decoding reads the labels off y (decode/ctc_search.h) and the picture is the
// alignment's posterior (frame_log_probs).
// Leaves out: search (decode/), training (train/).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include <nlohmann/json.hpp>

#include "heed/models/seq2seq.h"
#include "heed/nn/audio_front_end.h"
#include "heed/nn/sequence_encoder.h"

namespace heed {

struct ModelOptions;  // models/model_options.h

struct CtcConfig {
  static constexpr const char* kFamily = "ctc";  // config.json's "model", --model
  // a stacked BiLSTM by default (Graves et al. 2006; Rao et al. 2015), or any sequence encoder
  EncoderConfig encoder = RnnEncoderConfig{.cell = CellKind::Lstm, .layers = 2};
  int64_t tgt_vocab = 0;  // V, the blank (id 0) included
  int64_t upsample = 1;   // K positions per source unit
  int64_t lookahead = 0;  // N later positions each output reads ("lookahead"; absent: 0)
  float dropout = 0.f;    // on the encoder's inputs and between its layers, and before W
  // a speech recognizer's front end (its source is audio; the encoder a birnn reading vectors)
  std::optional<AudioFrontEndConfig> audio;

  // What every seq2seq family's config offers (models/registry.h)
  nlohmann::json to_json() const;
  static CtcConfig from_json(const nlohmann::json& j);
  // The config of the model options (models/model_options.h): this family's defaults, then
  // what was given; an Error for an option it refuses.
  static CtcConfig configure(const ModelOptions& o);
  std::string describe() const;  // "ctc, 2-layer bilstm, upsample 2"
  void set_vocabularies(int64_t src, int64_t tgt);
  // The source is audio, through `front` (its encoder must be a birnn: it reads its vectors).
  void set_audio(const AudioFrontEndConfig& front);
  bool joint_vocabulary() const { return false; }
};

class CtcModel final : public Seq2SeqModel {
 public:
  static constexpr int32_t kBlank = 0;  // Vocab::kPad
  CtcModel(const CtcConfig& config, const Scope& scope);
  const CtcConfig& config() const { return config_; }

  // Seq2SeqModel
  int64_t tgt_vocab() const override { return config_.tgt_vocab; }
  // -log p(l | x) summed over the batch, divided by its target tokens (EOS counted, as the
  // encoder-decoders' per-token cross-entropy); a pair with no alignment counts 0.
  Var loss(Graph& g, const Seq2SeqBatch& batch, float label_smoothing = 0.f) const override;
  std::unique_ptr<IncrementalDecoder> start_decoding(Graph& g, const Seq2SeqBatch& batch,
                                                     int64_t max_len,
                                                     const AttentionChoice& attention,
                                                     int64_t rows_per_source = 1) const override;
  const FrameLabeller* frame_labeller() const override { return &labeller_; }

  // The positions' class logits [B, K S, V] of a time-major source [S * B] and their
  // lengths (K lengths[b]).
  Var frame_logits(Graph& g, std::span<const int32_t> src, int64_t S,
                   std::span<const int32_t> lengths, std::span<int32_t> frame_lengths) const;
  // Of a batch's source, ids or (a recognizer) frames: [B, T, V] and each row's T.
  Var frame_logits(Graph& g, const Seq2SeqBatch& b, std::span<int32_t> frame_lengths) const;

 private:
  class Labeller final : public FrameLabeller {
   public:
    explicit Labeller(const CtcModel& m) : m_(m) {}
    FrameScores frame_log_probs(Graph& g, const Seq2SeqBatch& batch) const override;
    int64_t upsample() const override { return m_.config_.upsample; }
    int32_t blank() const override { return kBlank; }
    std::unique_ptr<Stream> stream() const override;

   private:
    const CtcModel& m_;
  };
  CtcConfig config_;
  std::unique_ptr<AudioFrontEnd> front_;  // a recognizer's
  std::unique_ptr<SequenceEncoder> encoder_;
  // The output layer's logits of states h [B, T, D] with each row's real positions
  // `lengths` (zeros past them, as the encoder leaves them): [B, T, V].
  Var output(Graph& g, Var h, std::span<const int32_t> lengths) const;
  Parameter *out_W_, *out_b_;  // [V, (N + 1) D], [V]
  Labeller labeller_{*this};
};

}  // namespace heed
