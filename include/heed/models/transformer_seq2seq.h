// The Transformer encoder-decoder (Vaswani et al. 2017; `heed train --model transformer`):
//   x = Dropout(E_src[src] * sqrt(d) + PE),  memory = Encoder(x)          [B, S, d]
//   y = Dropout(E_tgt[y_<t] * sqrt(d) + PE), h = Decoder(y, memory)       [B, T, d]
//   logits = h E_tgt^T + b  (output projection tied to the target embedding, Press & Wolf
//   2017, as in the paper's section 3.4; or a separate matrix)
// with sinusoidal or learned positions and pre- or post-LN layers (nn/transformer.h).
// The Speech-Transformer (Dong et al. 2018) is the same model over audio: the source is a log-mel
// front end's vectors (nn/audio_front_end.h: two stride-2 convolutions, 40 ms a vector) instead
// of E_src[src],
//   x = Dropout(sqrt(d) Front(features) + PE),  memory = Encoder(x)        [B, S', d]
// optionally trained and decoded jointly with a CTC head on the memory (ESPnet's recipe; Kim,
// Hori & Watanabe 2017; models/joint_ctc_decoder.h).
// Decoding is incremental: start() encodes the source and projects each layer's cross-attention
// keys and values once; step() runs one position through every decoder layer with its
// key/value cache, so the prefix is never recomputed.
// Leaves out: the training loop and search (train/, decode/).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "heed/models/joint_ctc_decoder.h"
#include "heed/models/seq2seq.h"
#include "heed/nn/audio_front_end.h"
#include "heed/nn/transformer.h"

namespace heed {

struct ModelOptions;  // models/model_options.h

struct TransformerSeq2SeqConfig {
  static constexpr const char* kFamily = "transformer";  // config.json's "model", --model
  int64_t src_vocab = 0, tgt_vocab = 0;
  TransformerLayerConfig layer;  // d_model, heads, ff, dropout, norm placement, activation
  int64_t enc_layers = 3, dec_layers = 3;
  Positions positions = Positions::Sinusoidal;
  int64_t max_positions = 1024;   // longest sequence (table size)
  bool tie_output = true;         // logits from the target embedding matrix
  bool share_embeddings = false;  // one table for both sides (needs one joint vocabulary)
  // a speech recognizer: the source is audio through this front end (its dim is d_model)
  std::optional<AudioFrontEndConfig> audio;
  // joint CTC-attention: > 0, a CTC head on the memory and the loss lambda CTC + (1 - lambda)
  // attention; decoding scores with CTC's prefix probabilities at ctc_decode_weight (< 0: lambda)
  float ctc_weight = 0.f;
  float ctc_decode_weight = -1.f;
  float joint_decode_weight() const {
    return ctc_decode_weight >= 0 ? ctc_decode_weight : ctc_weight;
  }

  // What every seq2seq family's config offers (models/registry.h)
  nlohmann::json to_json() const;
  static TransformerSeq2SeqConfig from_json(const nlohmann::json& j);
  // The config of the model options (models/model_options.h): this family's defaults, then
  // what was given; an Error for an option it refuses.
  static TransformerSeq2SeqConfig configure(const ModelOptions& o);
  std::string describe() const;  // "transformer 3+3 layers, d 256, 8 heads, ff 1024"
  void set_vocabularies(int64_t src, int64_t tgt);
  // The source is audio, through `front` (the Speech-Transformer).
  void set_audio(const AudioFrontEndConfig& front);
  bool joint_vocabulary() const { return share_embeddings; }  // one vocabulary of both sides
  OnlinePolicy online_policy() const;  // wait-k or monotonic heads with a causal encoder
                                       // (models/seq2seq.h)
  // The lowest decoder layer with cross-attention: 0, or with monotonic heads in the top
  // MonotonicHeadsConfig::layers layers only, the first of those
  int64_t first_attending() const;
};

class TransformerSeq2Seq final : public Seq2SeqModel {
 public:
  TransformerSeq2Seq(const TransformerSeq2SeqConfig& config, const Scope& scope);
  const TransformerSeq2SeqConfig& config() const { return config_; }

  // Seq2SeqModel
  int64_t tgt_vocab() const override { return config_.tgt_vocab; }
  int64_t max_output_len() const override { return config_.max_positions; }
  OnlinePolicy online_policy() const override { return config_.online_policy(); }
  bool hard_monotonic_attention() const override { return config_.layer.monotonic.has_value(); }
  // Cross-entropy over the target tokens (padding ignored); with monotonic heads trained against
  // latency, + their latency terms in training graphs (monotonic_latency_loss).
  Var loss(Graph& g, const Seq2SeqBatch& batch, float label_smoothing = 0.f) const override;
  // Decoding with the key/value caches (start/step below); the reported weights are the
  // cross-attention of the chosen layer, one head or the mean over heads.
  std::unique_ptr<IncrementalDecoder> start_decoding(Graph& g, const Seq2SeqBatch& batch,
                                                     int64_t max_len,
                                                     const AttentionChoice& attention,
                                                     int64_t rows_per_source = 1) const override;
  DecoderHeads decoder_heads() const override {
    return {static_cast<int>(config_.dec_layers), static_cast<int>(config_.layer.heads),
            static_cast<int>(config_.first_attending())};
  }

  // src time-major [S, B] (as in Seq2SeqBatch), packed as p -> memory [N_s, d], packed
  // (autograd/ops/packing.h: every position-wise layer computes on real positions only)
  Var encode(Graph& g, std::span<const int32_t> src, const Packing& p) const;
  // A batch's source, ids or audio frames (Seq2SeqBatch::F > 0) -> memory [N_s, d], packed as
  // the returned packing (audio: the front end's frames, a quarter of the features')
  std::pair<Var, Packing> encode(Graph& g, const Seq2SeqBatch& b) const;
  // Teacher-forced decoder over tgt_in time-major [T, B], packed as tgt -> the output layer's
  // input [N_t, d] (loss() fuses the output layer with the cross-entropy)
  // (wait_k: the cross-attention's prefix, Seq2SeqBatch::wait_k or the config's; monotonic
  // heads: `delays`, when given, gets each layer's expected delays [B, h, T], in tokens)
  Var decode(Graph& g, std::span<const int32_t> tgt_in, const Packing& tgt, Var memory,
             const Packing& src, int64_t wait_k, std::vector<Var>* delays = nullptr) const;
  Var output(Var h) const;  // h [..., d] -> logits [..., V]
  struct DecoderState {
    // per decoder layer: [B / rows_per_memory, S, 2d] (or none); rows r K .. r K + K - 1 read
    // memory row r (K = rows_per_memory: a source's beam reads its memory once; 1 when the
    // attention is monotonic or waits k, whose state is per row)
    std::vector<Var> memory_kv;
    // per decoder layer, when a memory row has enough rows to read it as a tile of queries
    // (kernels::kAbtTransposeRows; beam search): its keys transposed once
    // [B / rows_per_memory, h, d / h, S'] (TransformerDecoderLayer::transpose_memory_keys);
    // else empty
    std::vector<Tensor> memory_keys_t;
    int64_t rows_per_memory = 1;
    std::span<const int32_t> memory_lengths;  // [B / rows_per_memory], in the graph's arena
    std::vector<KvCache> caches;              // per decoder layer
    std::vector<MonotonicHeadsState> heads;   // per decoder layer: monotonic heads' stops (none
                                              // in a layer that does not attend)
    std::span<const int32_t> src_lengths;     // [B], in the graph's arena
    Var memory;                               // [N_s, d], each source once, packed as `packing`
    Packing packing;
    int64_t t = 0;  // the next target position
  };
  // Encodes the source and prepares caches for at most `max_len` target positions, with
  // `rows_per_source` decoder rows per source (the memory shared by them, or repeated: never
  // re-encoded).
  DecoderState start(Graph& g, std::span<const int32_t> src, int64_t S,
                     std::span<const int32_t> lengths, int64_t max_len,
                     int64_t rows_per_source = 1) const;
  // The same for a batch's source, ids or audio.
  DecoderState start(Graph& g, const Seq2SeqBatch& b, int64_t max_len,
                     int64_t rows_per_source = 1) const;
  // Online decoding with a causal encoder, the source growing a position at a time: the source
  // ids [B] at `position`, and one key/value cache per encoder layer (appended to) -> per
  // decoder layer, that position's projected memory [B, 1, w] (w: 2d, or 3d with MoChA heads'
  // chunk keys), what start() projects there.
  std::vector<Var> encode_position(Graph& g, std::span<const int32_t> ids, int64_t position,
                                   std::span<KvCache> encoder_caches) const;
  int64_t encoder_layers() const { return static_cast<int64_t>(encoder_.layers()); }
  struct Step {
    Var logits;            // [B, V]
    Var log_probs;         // [B, V] unless only logits were asked for
    Tensor weights;        // cross-attention of `attention_layer` [B, h, 1, S] (when asked for)
    bool ran_off = false;  // monotonic heads: some head of some row is off the memory's end
    // Scores::Best: each row's best_k outputs from Vocab::kEos on, best first [B, best_k], their
    // logits, and the row's log-sum-exp [B] (in the graph's arena); no logits made.
    // Scores::Argmax: the same with best_k 1, log_z null
    const int32_t* best_ids = nullptr;
    const float* best_logits = nullptr;
    const float* log_z = nullptr;
  };
  using Scores = heed::Scores;
  // One position: the previous tokens [B] -> the next token's scores; advances `state`.
  // attention_layer >= 0 also returns that decoder layer's cross-attention weights.
  Step step(Graph& g, std::span<const int32_t> prev, DecoderState& state,
            Scores scores = Scores::LogProbs, int attention_layer = -1, int64_t best_k = 0) const;

 private:
  // the decoder state over an encoded memory [N_s, d] packed as p
  DecoderState start_encoded(Graph& g, Var memory, const Packing& p, int64_t max_len,
                             int64_t rows_per_source) const;

  TransformerSeq2SeqConfig config_;
  std::unique_ptr<AudioFrontEnd> front_;          // a recognizer's (the Speech-Transformer)
  std::optional<JointCtcHead> ctc_;               // joint CTC-attention's head (--ctc-weight)
  Parameter* src_embed_ = nullptr;                // [V_src, d] (none for audio)
  Parameter* tgt_embed_;                          // [V_tgt, d] (the same as src_embed_ when shared)
  std::optional<PositionalEmbedding> positions_;  // made after the tables, as saved models expect
  Parameter* out_W_ = nullptr;                    // untied output: [V_tgt, d]
  Parameter* out_b_;                              // [V_tgt]
  TransformerEncoder encoder_;
  std::vector<TransformerDecoderLayer> decoder_;
  std::vector<LayerNorm> dec_final_;  // pre-LN: one final LayerNorm
};

}  // namespace heed
