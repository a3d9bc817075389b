// The convolutional encoder-decoder of Gehring et al. 2017, "Convolutional Sequence to Sequence
// Learning" (ConvS2S; `heed train --model conv`). Embeddings with learned positions (section
// 3.1), then a stack of gated convolutions on each side (3.2), the decoder's attending to the
// encoder in every layer (3.3):
//   e_j = w_j + p_j,  g_i = w'_i + p'_i                             [B, S, E], [B, T, E]
//   encoder  h = W_in e; per layer h <- s (h + GLU(conv(h)))        centred, kernel k  [B, S, C]
//            z_j = W_out h_j                                        [B, S, E]
//   decoder  h = W'_in g; per layer l, with z = GLU(causal_conv(h)) [B, T, C]:
//            d_i = s (W_d z_i + b_d + g_i)                          [B, T, E]
//            a_ij = softmax_j(d_i . z_j)                            (no 1/sqrt(E))
//            c_i = sqrt(m) sum_j a_ij (z_j + e_j)                   m: the source's length
//            h_i <- s (h_i + s (z_i + W_c c_i + b_c))
//            logits = W_o dropout(W'_out h) + b_o                   [B, T, V]
// with GLU(a; b) = a (.) sigmoid(b) and s = sqrt(1/2), which keeps the variance of a sum of two
// terms (3.4). The attention's values add the input embedding e_j to z_j (point information);
// its output is scaled by m sqrt(1/m) = sqrt(m), undoing a uniform average's 1/m variance (3.4).
// Decoding is incremental (Paine et al. 2016): every decoder layer keeps its last k inputs
// (nn/gated_conv.h's queues), so a step costs one position per layer, not the prefix again.
// Leaves out: the gradient scaling of the encoder by 1/(2 dec_layers) and the paper's
// initialisation (3.4; Glorot here, as the PyTorch tutorial), training and search (train/,
// decode/).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "heed/models/seq2seq.h"
#include "heed/nn/gated_conv.h"

namespace heed {

struct ModelOptions;  // models/model_options.h

struct ConvSeq2SeqConfig {
  static constexpr const char* kFamily = "conv";  // config.json's "model", --model
  int64_t src_vocab = 0, tgt_vocab = 0;
  int64_t embed = 256;     // E
  int64_t channels = 512;  // C
  int64_t kernel = 3;      // k: centred in the encoder (odd), causal in the decoder
  int64_t enc_layers = 10, dec_layers = 10;
  float dropout = 0.25f;  // on the embeddings, each convolution's input and before W_o
  bool weight_norm = false;
  int64_t max_positions = 1024;  // the longest sequence (the position tables)

  GatedConvConfig stack(int64_t layers, bool causal) const;  // one side's layers

  // What every seq2seq family's config offers (models/registry.h)
  nlohmann::json to_json() const;
  static ConvSeq2SeqConfig from_json(const nlohmann::json& j);
  // The config of the model options (models/model_options.h): this family's defaults, then
  // what was given; an Error for an option it refuses.
  static ConvSeq2SeqConfig configure(const ModelOptions& o);
  std::string describe() const;  // "conv 10+10 layers, E 256, C 512, k 3"
  void set_vocabularies(int64_t src, int64_t tgt);
  bool joint_vocabulary() const { return false; }
};

class ConvSeq2Seq final : public Seq2SeqModel {
 public:
  ConvSeq2Seq(const ConvSeq2SeqConfig& config, const Scope& scope);
  const ConvSeq2SeqConfig& config() const { return c_; }

  // Seq2SeqModel
  int64_t tgt_vocab() const override { return c_.tgt_vocab; }
  int64_t max_output_len() const override { return c_.max_positions; }
  DecoderHeads decoder_heads() const override { return {static_cast<int>(c_.dec_layers), 1}; }
  OnlinePolicy online_policy() const override {
    return {.reason = "a centred convolutional encoder (every state sees later source words)"};
  }
  Var loss(Graph& g, const Seq2SeqBatch& batch, float label_smoothing = 0.f) const override;
  // Decoding with per-layer queues; the reported weights are one decoder layer's attention.
  std::unique_ptr<IncrementalDecoder> start_decoding(Graph& g, const Seq2SeqBatch& batch,
                                                     int64_t max_len,
                                                     const AttentionChoice& attention,
                                                     int64_t rows_per_source = 1) const override;

  // What every decoder layer attends to
  struct Memory {
    Var keys;                          // z_j [B, S, E]
    Var keys_values;                   // [z_j ; z_j + e_j] [B, S, 2E]
    Var scale;                         // sqrt(m) per row [B, 1, 1]
    std::span<const int32_t> lengths;  // [B]
  };
  // src time-major [S, B] (as in Seq2SeqBatch) -> the memory, each row repeated
  // rows_per_source times
  Memory encode(Graph& g, std::span<const int32_t> src, int64_t S, std::span<const int32_t> lengths,
                int64_t rows_per_source = 1) const;
  // Teacher-forced decoder: tgt_in time-major [T, B] with lengths [B] -> logits [B, T, V]
  Var decode(Graph& g, std::span<const int32_t> tgt_in, int64_t T,
             std::span<const int32_t> tgt_lengths, const Memory& memory) const;

  struct DecoderState {
    Memory memory;
    GatedConvStack::Cache queues;  // the decoder layers' last inputs
    std::vector<float> h;          // [B, C]: the current layer's input
  };
  DecoderState start(Graph& g, std::span<const int32_t> src, int64_t S,
                     std::span<const int32_t> lengths, int64_t rows_per_source = 1) const;
  struct Step {
    Var logits;      // [B, V]
    Var log_probs;   // [B, V] unless only logits were asked for
    Tensor weights;  // a_i of `attention_layer` [B, 1, 1, S] (when asked for)
  };
  // One position: the previous tokens [B] -> the next token's scores; advances `state`.
  Step step(Graph& g, std::span<const int32_t> prev, DecoderState& state, Scores scores,
            int attention_layer = -1) const;
  void reorder(DecoderState& state, std::span<const int32_t> from) const {
    decoder_->reorder(state.queues, from);
  }

 private:
  // w_t + p_t for ids [B, T] at positions [B, T] -> [B, T, E]
  Var embed(Graph& g, Parameter& table, Parameter& positions, std::span<const int32_t> ids,
            std::span<const int32_t> where, const Shape& shape) const;
  // layer l's attention: z [B, T, C] and the target embeddings g [B, T, E] ->
  // s (z + W_c c + b_c) [B, T, C]; `weights` (if not null) receives a_i [B, 1, T, S]
  Var attend(Graph& g, int64_t l, Var z, Var target, const Memory& memory,
             Tensor* weights = nullptr) const;
  Var output(Graph& g, Var h) const;  // h [..., C] -> logits [..., V]

  ConvSeq2SeqConfig c_;
  Parameter *src_embed_, *src_pos_, *tgt_embed_, *tgt_pos_;        // [V, E], [P, E] per side
  Parameter *enc_in_W_, *enc_in_b_, *enc_out_W_, *enc_out_b_;      // [C, E], [C]; [E, C], [E]
  Parameter *dec_in_W_, *dec_in_b_, *dec_out_W_, *dec_out_b_;      // the decoder's alike
  std::vector<Parameter*> att_d_W_, att_d_b_, att_c_W_, att_c_b_;  // per layer [E, C], [E];
                                                                   // [C, E], [C]
  Parameter *out_W_, *out_b_;                                      // [V, E], [V]
  std::optional<GatedConvStack> encoder_, decoder_;
};

}  // namespace heed
