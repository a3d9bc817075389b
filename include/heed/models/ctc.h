// The CTC sequence labeller (Graves et al. 2006; seed 003 §2.3.2; `heed train --model ctc`):
//   x' = each source unit repeated K times (--upsample K: a word can have more phones than
//        letters, X -> EH K S, and CTC emits at most one label per position)
//   h  = Encoder(x')                   [B, K S, D]   any sequence encoder (nn/sequence_encoder.h)
//   y  = softmax(W Dropout(h) + b)     [B, K S, V]   per position, over the target vocabulary
// where class 0 (the padding id, which no target holds) is CTC's blank. Training minimises
// -log p(l | x), the sum over every alignment (autograd/ops/ctc.h); there is no decoder, and so
// no attention: decoding reads the labels off y (decode/ctc_search.h) and the picture is the
// alignment's posterior (frame_log_probs).
// Leaves out: search (decode/), training (train/).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include <nlohmann/json.hpp>

#include "heed/models/seq2seq.h"
#include "heed/nn/sequence_encoder.h"

namespace heed {

struct ModelOptions;  // models/model_options.h

struct CtcConfig {
  static constexpr const char* kFamily = "ctc";  // config.json's "model", --model
  // a stacked BiLSTM by default (Graves et al. 2006; Rao et al. 2015), or any sequence encoder
  EncoderConfig encoder = RnnEncoderConfig{.cell = CellKind::Lstm, .layers = 2};
  int64_t tgt_vocab = 0;  // V, the blank (id 0) included
  int64_t upsample = 1;   // K positions per source unit
  float dropout = 0.f;    // on the encoder's inputs and between its layers, and before W

  // What every seq2seq family's config offers (models/registry.h)
  nlohmann::json to_json() const;
  static CtcConfig from_json(const nlohmann::json& j);
  // The config of the model options (models/model_options.h): this family's defaults, then
  // what was given; an Error for an option it refuses.
  static CtcConfig configure(const ModelOptions& o);
  std::string describe() const;  // "ctc, 2-layer bilstm, upsample 2"
  void set_vocabularies(int64_t src, int64_t tgt);
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

 private:
  class Labeller final : public FrameLabeller {
   public:
    explicit Labeller(const CtcModel& m) : m_(m) {}
    FrameScores frame_log_probs(Graph& g, const Seq2SeqBatch& batch) const override;
    int64_t upsample() const override { return m_.config_.upsample; }
    int32_t blank() const override { return kBlank; }

   private:
    const CtcModel& m_;
  };
  CtcConfig config_;
  std::unique_ptr<SequenceEncoder> encoder_;
  Parameter *out_W_, *out_b_;  // [V, D], [V]
  Labeller labeller_{*this};
};

}  // namespace heed
