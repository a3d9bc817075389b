// The model options' name tables, the encoders they describe and the checks every family shares
// (see the header).
#include "heed/models/model_options.h"

#include "heed/models/transformer_seq2seq.h"
#include "heed/util/error.h"

namespace heed {

std::span<const Named<EncoderKind>> names(EncoderKind) {
  static constexpr Named<EncoderKind> kNames[] = {{EncoderKind::Rnn, "rnn"},
                                                  {EncoderKind::Transformer, "transformer"},
                                                  {EncoderKind::Conv, "conv"},
                                                  {EncoderKind::Kim, "kim"}};
  return kNames;
}

std::span<const Named<MonotonicPolicy>> names(MonotonicPolicy) {
  static constexpr Named<MonotonicPolicy> kNames[] = {{MonotonicPolicy::Heads, "heads"},
                                                      {MonotonicPolicy::Shared, "shared"}};
  return kNames;
}

std::span<const Named<EncoderDirection>> names(EncoderDirection) {
  static constexpr Named<EncoderDirection> kNames[] = {{EncoderDirection::Both, "both"},
                                                       {EncoderDirection::Forward, "forward"}};
  return kNames;
}

RnnEncoderConfig rnn_encoder(const ModelOptions& o, RnnEncoderConfig base) {
  if (o.embed) base.embed = *o.embed;
  if (o.hidden) base.hidden = *o.hidden;
  if (o.layers) base.layers = static_cast<int>(*o.layers);
  if (o.cell) base.cell = *o.cell;
  if (o.rnn_init) base.init = *o.rnn_init;
  base.bidirectional = o.direction == EncoderDirection::Both;
  return base;
}

ConvEncoderConfig conv_encoder(const ModelOptions& o, int64_t embed) {
  ConvEncoderConfig c;
  c.embed = embed;
  if (o.conv_channels) c.channels = *o.conv_channels;
  c.kernel = o.conv_kernel;
  c.dilations = o.conv_dilations;
  c.causal = o.conv_causal;
  c.weight_norm = o.conv_weight_norm;
  if (o.dropout) c.dropout = *o.dropout;
  if (o.max_positions) c.max_positions = *o.max_positions;
  return c;
}

KimEncoderConfig kim_encoder(const ModelOptions& o, int64_t embed) {
  return {.embed = embed, .widths = o.kim_widths, .maps = o.kim_maps};
}

TransformerLayerConfig transformer_layer(const ModelOptions& o, TransformerLayerConfig base) {
  if (o.d_model) base.d_model = *o.d_model;
  if (o.heads) base.heads = *o.heads;
  if (o.ff) base.ff = *o.ff;
  if (o.norm) base.norm = *o.norm;
  if (o.dropout) base.dropout = *o.dropout;
  base.activation = o.activation;
  base.causal_encoder = o.causal_encoder;
  check(o.encoder_chunk == 0 || !o.causal_encoder,
        "--encoder-chunk and --causal-encoder are two streaming encoders; give one");
  base.encoder_chunk = o.encoder_chunk;
  base.left_chunks = o.encoder_chunk > 0 ? o.left_chunks : 0;
  return base;
}

EncoderConfig sequence_encoder(const ModelOptions& o, const RnnEncoderConfig& rnn_base) {
  const RnnEncoderConfig rnn = rnn_encoder(o, rnn_base);
  switch (o.encoder.value_or(EncoderKind::Rnn)) {
    case EncoderKind::Conv:
      return conv_encoder(o, rnn.embed);
    case EncoderKind::Kim:
      return kim_encoder(o, rnn.embed);
    case EncoderKind::Transformer: {
      TransformerLayerConfig layer = transformer_layer(o, {});
      layer.wait_k = 0;  // an encoder has no cross-attention
      return TransformerEncoderConfig{
          .layer = layer,
          .layers = o.layers.value_or(3),
          .positions = o.positions,
          .max_positions = o.max_positions.value_or(TransformerSeq2SeqConfig{}.max_positions)};
    }
    case EncoderKind::Rnn:
      break;
  }
  return rnn;
}

LatencyLoss latency_loss(const ModelOptions& o) {
  LatencyLoss l = o.latency;
  if (o.latency_gather) l.gather = *o.latency_gather;
  return l;
}

void refuse_wait_k(const ModelOptions& o, std::string_view why) {
  check(o.wait_k == 0, "--wait-k is for encoder-decoders (rnn, transformer); ", why);
  check(o.wait_k_chunk == 0, "--wait-k-chunk is for the rnn family's speech models; ", why);
}

void refuse_syntactic_attention(const ModelOptions& o, std::string_view family) {
  check(!o.syntactic_attention,
        "--syntactic-attention is a layer over the encoder of the rnn family and the "
        "classifiers, not of a ",
        family, " model");
}

void refuse_ctc_options(const ModelOptions& o, std::string_view family) {
  check(o.upsample == CtcConfig{}.upsample && o.lookahead == CtcConfig{}.lookahead,
        "--upsample and --lookahead are the ctc family's (positions per source unit, and the "
        "positions each output reads ahead); a ",
        family, " model has neither");
}

void check_monotonic_options(const ModelOptions& o, bool monotonic, bool heads) {
  check(!o.latency.trains() || monotonic,
        "--latency-weight and --latency-var-weight weigh the delays of monotonic attention: for "
        "--model rnn|transformer --attention monotonic|mocha");
  const bool monotonic_heads = monotonic && heads;
  check(o.head_drop == 0.f || monotonic_heads,
        "--head-drop masks out heads of monotonic multihead attention: for --model transformer "
        "--attention monotonic|mocha");
  check(o.monotonic_layers == 0 || monotonic_heads,
        "--monotonic-layers places monotonic multihead attention: for --model transformer "
        "--attention monotonic|mocha");
  check(!o.monotonic_policy || monotonic_heads,
        "--monotonic-policy chooses how monotonic multihead attention stops: for --model "
        "transformer --attention monotonic|mocha");
  check(!o.latency_gather || o.latency.weight > 0,
        "--latency-gather gathers the heads for --latency-weight: give a weight");
  check(o.latency.warmup == 0 || o.latency.trains(),
        "--latency-warmup ramps up --latency-weight or --latency-var-weight: give a weight");
  check(heads || (o.latency.var_weight == 0 && !o.latency_gather),
        "--latency-var-weight and --latency-gather are for a transformer's heads: an rnn's "
        "monotonic attention is one head (--latency-weight alone)");
}

}  // namespace heed
