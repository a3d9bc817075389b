// A sequence encoder: token ids -> one vector per position, what attention reads (Bahdanau's
// annotations, the Transformer's memory, the classifier's H), and optionally one vector for
// the whole sequence. The RNN encoder-decoder and the sentence classifier take any of them
// (make_sequence_encoder), so a new encoder is one class and one alternative of EncoderConfig:
//   birnn        embeddings -> stacked GRU/LSTM layers, uni- or bidirectional (nn/rnn.h);
//                summary [->h_n ; <-h_1]
//   transformer  sqrt(d) E w_i + P_i -> stacked encoder layers (nn/transformer.h), its own
//                embedding table; summary: the mean over the real positions. A speech front
//                end's vectors go in as they are, without positions: its convolutions give the
//                layers the order (Mohamed et al. 2019, "Transformers with convolutional context
//                for ASR"), and a stream's positions have no end. Chunked layers stream.
//   conv         E w_i + P_i -> C channels -> residual blocks of dilated convolutions with
//                WaveNet's gate, causal or centred (seed 001, section 3); summary: the mean
//   kim          E w_i -> convolutions of several widths, ReLU (Kim 2014); summary: the max
// Leaves out: the Transformer encoder-decoder's encoder, which shares its table and positions
// with the decoder and stays on packed rows (models/transformer_seq2seq.h).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "heed/nn/gated_conv.h"
#include "heed/nn/rnn.h"
#include "heed/nn/transformer.h"

namespace heed {

// The Transformer encoder as a sequence encoder of its own (embeddings, positions, layers).
struct TransformerEncoderConfig {
  int64_t vocab = 0;  // V
  TransformerLayerConfig layer;
  int64_t layers = 2;
  Positions positions = Positions::Sinusoidal;
  int64_t max_positions = 512;  // the longest sequence

  // {"kind": "transformer", "vocab", the layer's keys, "layers", "positions", "max_positions"}
  nlohmann::json to_json() const;
  static TransformerEncoderConfig from_json(const nlohmann::json& j);
};

// The convolutional encoder (van den Oord et al. 2016, "WaveNet", section 2; Gehring et al.
// 2017, "Convolutional Sequence to Sequence Learning", section 3): learned positions added to
// the embeddings, x_t = E w_t + P_t [E], a linear map to C channels, then per layer l
//   [a ; b] = conv_l(dropout(h)),  h <- sqrt(1/2) (h + tanh(a) (.) sigmoid(b))
// with conv_l of kernel k and dilation d_l, causal (output t sees t and the past: what online
// decoding needs) or centred. Receptive field 1 + sum_l (k - 1) d_l.
struct ConvEncoderConfig {
  int64_t vocab = 0;                              // V
  int64_t embed = 256;                            // E
  int64_t channels = 256;                         // C
  int64_t kernel = 3;                             // k
  std::vector<int64_t> dilations = {1, 2, 4, 8};  // d_l, one per layer
  bool causal = false;
  bool weight_norm = false;  // every convolution's w = g v / ||v|| (ConvS2S)
  float dropout = 0.f;
  int64_t max_positions = 1024;  // the longest sequence (the position table)

  int64_t receptive_field() const;
  GatedConvConfig stack() const;  // its layers (nn/gated_conv.h)
  // {"kind": "conv", "vocab", "embed", "channels", "kernel", "dilations", "causal", "dropout",
  //  "max_positions", "weight_norm"}
  nlohmann::json to_json() const;
  static ConvEncoderConfig from_json(const nlohmann::json& j);
};

// Kim 2014's multi-width convolutions ("Convolutional Neural Networks for Sentence
// Classification", section 2): for each width w, `maps` filters over windows of w words,
//   c_i = ReLU(w . x_{i-w+1 : i} + b)            [B, S, maps] per width
// (the windows end at every word, those starting before the sentence reading zeros), the
// widths' maps side by side [B, S, maps * |widths|]; summary: max over time, c^ = max_i c_i,
// the sentence vector Kim's classifier reads. No positions and no recurrence: a bag of n-gram
// detectors, each output seeing w words.
struct KimEncoderConfig {
  int64_t vocab = 0;                        // V
  int64_t embed = 300;                      // E (Kim: 300, word2vec's size)
  std::vector<int64_t> widths = {3, 4, 5};  // filter windows h
  int64_t maps = 100;                       // feature maps per width
  float dropout = 0.f;                      // on the embeddings (Kim: none; 0.5 on c^)

  int64_t width() const { return maps * static_cast<int64_t>(widths.size()); }
  // {"kind": "kim", "vocab", "embed", "widths", "maps", "dropout"}
  nlohmann::json to_json() const;
  static KimEncoderConfig from_json(const nlohmann::json& j);
};

// One alternative per encoder.
using EncoderConfig =
    std::variant<RnnEncoderConfig, TransformerEncoderConfig, ConvEncoderConfig, KimEncoderConfig>;
int64_t vocab_size(const EncoderConfig& c);  // V
// One line for the training log: "2-layer bilstm 256", "4-layer centred conv encoder, C 256,
// k 3, receptive field 31", ...
std::string describe(const EncoderConfig& c);
// An encoder's keys in a model's config.json: an RNN's beside the model's own ("cell",
// "src_vocab", "src_embed", "enc_hidden", "enc_layers", "bidirectional"), as the rnn family has
// always written them; any other as "src_vocab" and "encoder": {"kind", ...}. Reading lets
// nlohmann-json's exceptions through, for the model's config to name itself.
void encoder_to_json(const EncoderConfig& c, nlohmann::json& j);
EncoderConfig encoder_from_json(const nlohmann::json& j);
void set_vocab_size(EncoderConfig& c, int64_t vocab);

class SequenceEncoder {
 public:
  struct Options {
    bool summary = false;         // also Output::summary
    bool self_attention = false;  // also the last layer's self-attention weights (Transformer)
    bool tree = false;            // also the parent marginals (syntactic attention)
  };
  struct Output {
    Var states;             // [B, S, D]: one vector per position (padding rows unused)
    Var summary;            // [B, D]: the whole sequence, when asked
    Tensor self_attention;  // [B, h, S, S]: the last layer's weights, when asked and had
    Tensor tree;  // [B, S + 1, S]: p(parent(m) = h) at [b][h][m - 1] (h = 0: the root), when
                  // asked and had (nn/syntactic_attention.h)
  };
  virtual ~SequenceEncoder() = default;
  virtual int64_t width() const = 0;  // D
  // ids [S * B] time-major (padding Vocab::kPad), lengths [B] in 1..S
  virtual Output encode(Graph& g, std::span<const int32_t> ids, int64_t S,
                        std::span<const int32_t> lengths, const Options& options) const = 0;
  // Vectors instead of ids: x [S, B, E] time-major (a speech front end's output, E its width),
  // lengths [B] in 1..S. The encoders that read ids only refuse (an Error).
  virtual Output encode_vectors(Graph& g, Var x, std::span<const int32_t> lengths,
                                const Options& options) const;
  // A causal encoder reads one sequence of vectors as it arrives (a recognizer's stream):
  // push(g, x [n, 1, E]) -> the states [1, m, D] of the positions it completes, each position
  // computed once, the encoder's state carried between pushes outside any graph (a graph may be
  // rewound or cleared between them). A recurrent encoder completes the n positions pushed; a
  // chunked one holds them until their chunk and lookahead are there (m may be 0: an invalid
  // Var), and finish(g) gives the rest at the sequence's end. The states equal encode_vectors'
  // over the whole sequence.
  class Stream {
   public:
    virtual ~Stream() = default;
    virtual Var push(Graph& g, Var x) = 0;
    virtual Var finish(Graph& /*g*/) { return {}; }
  };
  // An Error for an encoder whose states depend on later positions (a bidirectional one).
  virtual std::unique_ptr<Stream> stream_vectors() const;
};

// ids time-major [S, B] -> batch-major [B, S], in the graph's arena (the convolutional
// models' layout); and the positions t of a batch-major [B, S] batch.
std::span<const int32_t> batch_major(Graph& g, std::span<const int32_t> ids, int64_t B, int64_t S);
std::span<const int32_t> position_ids(Graph& g, int64_t B, int64_t S);

// sum_t x_t / n over each sequence's n real positions: x [B, S, D], lengths [B] -> [B, D]
// (the Transformer encoder's summary; the classifier's mean pooling).
Var mean_over_positions(Graph& g, Var x, std::span<const int32_t> lengths);
// max_t x_t over each sequence's real positions (padding at -inf): x [B, S, D] -> [B, D] (Kim's
// summary; the classifier's max pooling).
Var max_over_positions(Graph& g, Var x, std::span<const int32_t> lengths);

// The encoder of `config`, its parameters under `scope` as the models have always named them:
// the RNN's under "encoder/", the Transformer's table "embed" and "positions" beside
// "encoder/" (so model directories written before this interface load unchanged).
std::unique_ptr<SequenceEncoder> make_sequence_encoder(const EncoderConfig& config,
                                                       const Scope& scope);

}  // namespace heed
