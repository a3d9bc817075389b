// The model options of `heed train` (and of heed.train in Python), typed once: the command line
// fills them and the chosen family's row turns them into its config (ModelFamily::configure in
// models/registry.h), each family reading the options it has in its own file, beside its
// from_json. An option whose default differs between families is a std::optional, unset until
// given; the others carry the default of the one family (or mechanism) that reads them.
// Leaves out: the data, loop and optimiser options (train/), and parsing (cli/).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "heed/models/ctc.h"
#include "heed/models/rnn_seq2seq.h"
#include "heed/models/sentence_classifier.h"
#include "heed/nn/latency_loss.h"
#include "heed/nn/sequence_encoder.h"
#include "heed/nn/transformer.h"
#include "heed/util/names.h"

namespace heed {

// --encoder: which sequence encoder reads the source (nn/sequence_encoder.h)
enum class EncoderKind { Rnn, Transformer, Conv, Kim };
std::span<const Named<EncoderKind>> names(EncoderKind);  // "rnn" | "transformer" | "conv" | "kim"
// --monotonic-policy: a stop per head of every layer, or one stopping head for the decoder
enum class MonotonicPolicy { Heads, Shared };
std::span<const Named<MonotonicPolicy>> names(MonotonicPolicy);  // "heads" | "shared"
// --encoder-direction: both directions (--bidirectional), or forward only (--unidirectional)
enum class EncoderDirection { Both, Forward };
std::span<const Named<EncoderDirection>> names(EncoderDirection);  // "both" | "forward"

struct ModelOptions {
  // the shape: every family reads these, each with its own default when unset
  std::optional<int64_t> layers;      // encoder layers (and the decoder's unless dec_layers)
  std::optional<int64_t> dec_layers;  // decoder layers
  std::optional<float> dropout;
  std::optional<int64_t> embed;     // source (or both sides') embedding size
  std::optional<int64_t> hidden;    // an RNN encoder's hidden size per direction
  std::optional<CellKind> cell;     // the recurrent cell
  std::optional<RnnInit> rnn_init;  // its weights' start (glorot; a recognizer's: uniform)
  std::optional<EncoderKind> encoder;
  std::optional<AttentionKind> attention;  // rnn: the mechanism; transformer: monotonic heads
  std::optional<int64_t> attn_dim;         // additive scorers' hidden size
  // the Transformer's layers (the seq2seq family's, the classifier's and a ctc encoder's)
  std::optional<int64_t> d_model, heads, ff, max_positions;
  std::optional<NormPlacement> norm;
  FfnActivation activation = FfnActivation::Relu;
  Positions positions = Positions::Sinusoidal;
  bool causal_encoder = false;
  int64_t encoder_chunk = 0, left_chunks = 4;  // chunked encoder self-attention (0: none)
  bool untied_output = false;
  bool share_embeddings = false;
  // the RNN encoder-decoder
  EncoderDirection direction = EncoderDirection::Both;
  bool reverse_source = false;
  int64_t tgt_embed = RnnSeq2SeqConfig{}.tgt_embed;
  int64_t dec_hidden = RnnSeq2SeqConfig{}.dec_hidden;
  Readout readout = RnnSeq2SeqConfig{}.readout;
  int64_t readout_dim = RnnSeq2SeqConfig{}.readout_dim;
  // the attention mechanisms' own (rnn; monotonic ones also the Transformer's heads)
  LocalAttentionConfig local{};                    // local-*: the window
  LocationAttentionConfig location{};              // location: its filters, width, options
  MonotonicAttentionConfig monotonic_attention{};  // monotonic, mocha: chunk, noise, r's bias
  HardAttentionConfig hard{};
  int64_t wait_k = 0;        // wait-k (rnn and transformer)
  int64_t wait_k_chunk = 0;  // rnn on audio: wait-k's source unit, in encoder positions (0: 7)
  float ctc_weight = 0.f;    // rnn: joint CTC-attention's lambda (0: attention alone)
  // monotonic attention against latency (the gather: unset, the mean)
  LatencyLoss latency;
  std::optional<LatencyGather> latency_gather;
  // the Transformer's monotonic heads
  float head_drop = 0.f;
  int64_t monotonic_layers = 0;
  std::optional<MonotonicPolicy> monotonic_policy;
  // the convolutional encoder (--encoder conv, the conv classifier) and ConvS2S
  std::optional<int64_t> conv_channels;
  int64_t conv_kernel = ConvEncoderConfig{}.kernel;
  std::vector<int64_t> conv_dilations = ConvEncoderConfig{}.dilations;
  bool conv_weight_norm = false, conv_causal = false;
  // Kim 2014's convolutions (--encoder kim, kim-cnn)
  std::vector<int64_t> kim_widths = KimEncoderConfig{}.widths;
  int64_t kim_maps = KimEncoderConfig{}.maps;
  // ctc
  int64_t upsample = CtcConfig{}.upsample;
  int64_t lookahead = CtcConfig{}.lookahead;
  // the classifiers' pooling and MLP (models/sentence_classifier.h)
  std::optional<Pooling> pooling;
  int64_t hops = 4;
  float penalty = 0.f;
  std::optional<int64_t> mlp_hidden;
  float word_dropout = 0.f;
  float max_norm = 0.f;
  // syntactic attention over the encoder's states (the rnn family and the classifiers)
  bool syntactic_attention = false;
};

// The encoders the options describe, from a family's defaults `base`: what is given replaces
// it. The RNN encoder (embed, hidden, layers, cell, direction); the convolutional one (its --conv-*
// options, `embed`, the Transformer's max_positions, dropout when given); Kim's (its widths and
// maps, `embed`); the Transformer's layer (d_model, heads, ff, norm, activation, causal, dropout
// when given).
RnnEncoderConfig rnn_encoder(const ModelOptions& o, RnnEncoderConfig base);
ConvEncoderConfig conv_encoder(const ModelOptions& o, int64_t embed);
KimEncoderConfig kim_encoder(const ModelOptions& o, int64_t embed);
TransformerLayerConfig transformer_layer(const ModelOptions& o, TransformerLayerConfig base);
// The encoder --encoder names (unset: the RNN encoder of `rnn_base` and the options); the
// convolutional and Kim's sized by the RNN encoder's embedding; the Transformer's of --layers
// layers (3 unless given).
EncoderConfig sequence_encoder(const ModelOptions& o, const RnnEncoderConfig& rnn_base);
// Training against latency: the weights, and the gather (the mean unless given).
LatencyLoss latency_loss(const ModelOptions& o);

// The options a family without wait-k refuses (`why`: "a conv model has no wait-k").
void refuse_wait_k(const ModelOptions& o, std::string_view why);
// --syntactic-attention, for the families without it (`family`: "transformer").
void refuse_syntactic_attention(const ModelOptions& o, std::string_view family);
// --upsample and --lookahead, the ctc family's own, for the others.
void refuse_ctc_options(const ModelOptions& o, std::string_view family);
// The latency and monotonic-head options, against what the family built: `monotonic` whether it
// has monotonic attention, `heads` whether that is a Transformer's heads.
void check_monotonic_options(const ModelOptions& o, bool monotonic, bool heads);

}  // namespace heed
