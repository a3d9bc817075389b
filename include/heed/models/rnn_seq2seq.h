// The RNN encoder-decoder with attention (`heed train --model rnn`).
//   Encoder: embeddings -> 1..N GRU/LSTM layers, uni- or bidirectional (nn/rnn.h), or any
//     sequence encoder (nn/sequence_encoder.h: a Transformer encoder); optional source
//     reversal (Sutskever et al. 2014).
//   Decoder, two styles chosen by the attention:
//     Bahdanau (none, bahdanau, monotonic, mocha): c_i = attend(s_{i-1});
//       s_i = RNN([E y_{i-1} ; c_i], s_{i-1});
//       logits from o_i = [s_i ; c_i ; E y_{i-1}] (the deep-output inputs of Bahdanau et al.
//       2015), by one of two read-outs (--readout):
//         concat: logits = W o_i + b, straight to the vocabulary (as the PyTorch peer);
//         maxout: the paper's deep output (appendix A.2.2), a maxout layer of l units,
//           t~_i = W_t o_i + b_t [2l],  t_i,j = max(t~_i,2j-1, t~_i,2j) [l],
//           logits = W_o t_i + b — the vocabulary product l wide instead of |o_i| wide.
//     Luong (luong-*, local-*): h_t = RNN([E y_{t-1} ; h~_{t-1}], h_{t-1}) (input feeding);
//       c_t = attend(h_t); h~_t = tanh(W_c [c_t ; h_t]); logits = W_s h~_t (Luong et al. 2015).
//     Hard attention (hard) decodes in the Bahdanau style with c_i = h_j of one j; trained
//       exactly (--hard-train exact, Wu, Shapiro & Cotterell 2018), its decoder is fed y_{i-1}
//       only, s_i = RNN(E y_{i-1}, s_{i-1}), alpha_i = attend(s_i), and
//       p(y_i) = sum_j alpha_ij softmax(W_s s_i + W_c h_j + W_y E y_{i-1} + b)
//       (W_c h_j once per batch; decoding: the argmax j's term alone). With --readout maxout,
//       every j's logits go through the deep output instead (Wu et al.'s emission is a tanh
//       layer over [s_i ; h_j]; here the maxout layer of the Bahdanau read-out):
//       l_ij = W_o maxout(W_s s_i + W_c h_j + W_y E y_{i-1} + b_t) + b_o.
//   s_0 = tanh(W [->h_S ; <-h_1]) (Bahdanau et al. 2015, appendix A.2.2): the encoder's summary.
// Leaves out: data handling (data/, train/) and search (decode/).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "heed/models/joint_ctc_decoder.h"
#include "heed/models/seq2seq.h"
#include "heed/nn/attention/attention.h"
#include "heed/nn/audio_front_end.h"
#include "heed/nn/latency_loss.h"
#include "heed/nn/reinforce.h"
#include "heed/nn/rnn.h"
#include "heed/nn/sequence_encoder.h"

namespace heed {

struct ModelOptions;  // models/model_options.h

// The read-out of a Bahdanau-style decoder: logits straight from [s_i ; c_i ; E y_{i-1}], or
// through Bahdanau et al. 2015's maxout layer of `readout_dim` units.
enum class Readout { Concat, Maxout };
std::span<const Named<Readout>> names(Readout);  // "concat" | "maxout"

struct RnnSeq2SeqConfig {
  static constexpr const char* kFamily = "rnn";  // config.json's "model", --model
  // the source side: a (bi)RNN (vocab, embed, hidden per direction, layers, ...) or any other
  // sequence encoder (nn/sequence_encoder.h)
  EncoderConfig encoder = RnnEncoderConfig{};
  int64_t tgt_vocab = 0;     // V
  int64_t tgt_embed = 256;   // E
  int64_t dec_hidden = 512;  // H_d
  CellKind dec_cell = CellKind::Gru;
  AttentionKind attention = AttentionKind::Bahdanau;
  int64_t attn_dim = 512;  // A: additive scorers
  // the mechanisms' own options (nn/attention/attention.h), each read by its mechanism alone
  LocalAttentionConfig local{};                    // local-m, local-p: the window D
  LocationAttentionConfig location{};              // location: filters, width, sharpening...
  MonotonicAttentionConfig monotonic_attention{};  // monotonic, mocha: chunk, noise, r's bias
  // monotonic/mocha: training adds latency.weight times the mean expected delay, ramped up over
  // latency.warmup updates (nn/latency_loss.h; one head: no gather, no variance)
  LatencyLoss latency;
  int64_t wait_k = 0;                 // k > 0: output i attends to source positions < i + k only
  HardAttentionConfig hard{};         // hard: its score function and training
  float dropout = 0.f;                // on embeddings and before the read-out's products
  Readout readout = Readout::Concat;  // Bahdanau-style decoders (config.json without: concat)
  int64_t readout_dim = 500;          // l: maxout units
  bool reverse_source = false;        // feed the source reversed (Sutskever et al. 2014)
  // syntactic attention over the encoder's states (nn/syntactic_attention.h; Kim et al. 2017)
  bool syntactic_attention = false;
  // a speech recognizer's front end (Listen, Attend and Spell: its source is audio, the encoder
  // a birnn reading the front end's vectors)
  std::optional<AudioFrontEndConfig> audio;
  // joint CTC-attention (Kim, Hori & Watanabe 2017): > 0, a CTC head on the encoder's states
  // and the loss lambda CTC + (1 - lambda) attention; decoding then scores with CTC's prefix
  // probabilities at ctc_decode_weight (models/joint_ctc_decoder.h; < 0: lambda itself)
  float ctc_weight = 0.f;
  float ctc_decode_weight = -1.f;
  // >= 0 (hard monotonic attention, MoChA): CTC's prefix scores read the audio up to this many
  // positions past each step's attention stop, not the whole utterance, so that the joint
  // decoding streams (joint CTC-MoChA; models/joint_ctc_decoder.h); -1: the whole utterance
  int64_t ctc_decode_lookahead = -1;
  // a speech model's wait-k: its source tokens are chunks of this many positions (0: text's 1)
  int64_t wait_k_chunk = 0;
  float joint_decode_weight() const {
    return ctc_decode_weight >= 0 ? ctc_decode_weight : ctc_weight;
  }

  bool luong_style() const { return decoder_style(attention) == DecoderStyle::Luong; }
  // online decoding's policy (models/seq2seq.h); an online model starts its decoder from a
  // learned state, s_0 = tanh(b), not from the encoder's summary of the whole source
  OnlinePolicy online_policy() const;
  bool monotonic() const {
    return attention == AttentionKind::Monotonic || attention == AttentionKind::Mocha;
  }
  bool hard_exact() const {
    return attention == AttentionKind::Hard && hard.training == HardTraining::Exact;
  }
  // What every seq2seq family's config offers (models/registry.h)
  nlohmann::json to_json() const;
  static RnnSeq2SeqConfig from_json(const nlohmann::json& j);
  // The config of the model options (models/model_options.h): this family's defaults, then
  // what was given; an Error for an option it refuses.
  static RnnSeq2SeqConfig configure(const ModelOptions& o);
  std::string describe() const;  // "rnn/bahdanau"
  void set_vocabularies(int64_t src, int64_t tgt);
  bool joint_vocabulary() const { return false; }
  // The source is audio, through `front` (the encoder a birnn; its --embed the front end's width).
  void set_audio(const AudioFrontEndConfig& front);
};

class RnnSeq2Seq final : public Seq2SeqModel {
 public:
  RnnSeq2Seq(const RnnSeq2SeqConfig& config, const Scope& scope);
  // With an attention mechanism of the caller's instead of config.attention's (tests of
  // mechanisms that are not registered).
  RnnSeq2Seq(const RnnSeq2SeqConfig& config, const Scope& scope,
             const std::function<std::unique_ptr<Attention>(const AttentionConfig&, const Scope&)>&
                 make_mechanism);
  const RnnSeq2SeqConfig& config() const { return config_; }

  // Seq2SeqModel
  int64_t tgt_vocab() const override { return config_.tgt_vocab; }
  bool reverse_source() const override { return config_.reverse_source; }
  OnlinePolicy online_policy() const override { return config_.online_policy(); }
  bool hard_monotonic_attention() const override { return config_.monotonic(); }
  // Teacher-forced cross-entropy over the target tokens (padding ignored).
  Var loss(Graph& g, const Seq2SeqBatch& batch, float label_smoothing = 0.f) const override;
  Tensor source_trees(Graph& g, const Seq2SeqBatch& batch) const override;
  std::unique_ptr<IncrementalDecoder> start_decoding(Graph& g, const Seq2SeqBatch& batch,
                                                     int64_t max_len,
                                                     const AttentionChoice& attention,
                                                     int64_t rows_per_source = 1) const override;
  // A recognizer with hard monotonic attention or MoChA over a --unidirectional encoder.
  std::unique_ptr<AttentionStream> attention_stream(int64_t slack,
                                                    int64_t endpoint = 0) const override;

  // Incremental decoding, used by greedy and beam search: the source is encoded once by
  // start(), then step() takes the previous tokens [B] and returns log-probabilities [B, V].
  // The state is the decoder's own; the model stays const, so decoders (and losses) of one
  // model run side by side.
  struct DecoderState {
    RnnState rnn;              // s (or h_t) [B, H_d]
    Var feed;                  // h~_{t-1} [B, H_d] (Luong style) or the last context (Bahdanau)
    AttentionState attention;  // the memory, its projections and the previous alignment
    Var mix_keys;              // exact hard attention: W_c h_j [B, S, V or 2l], by start()
    int64_t t() const { return attention.step; }  // the target position
    // What a step makes and the next reads: carried over Graph::rewind, gathered by reorder().
    using AttentionCarried = decltype(std::declval<AttentionState&>().carried());
    std::array<Var*, 3 + std::tuple_size_v<AttentionCarried>> carried();
    // Beam search: row r continues row from[r] (rows of one source only).
    void reorder(std::span<const int32_t> from);
  };
  struct Step {
    Var logits;     // [B, V]
    Var log_probs;  // [B, V], unless step() was asked for logits only
    Var weights;    // alpha [B, S]
    DecoderState next;
  };
  // Encodes the batch once; the decoder state (its attention's memory included) gets
  // `rows_per_source` rows per source (row n k + j decodes source n).
  DecoderState start(Graph& g, std::span<const int32_t> src, int64_t S,
                     std::span<const int32_t> lengths, int64_t rows_per_source = 1) const;
  // The same for a batch's source: its ids, or a recognizer's frames (Seq2SeqBatch::features).
  DecoderState start(Graph& g, const Seq2SeqBatch& b, int64_t rows_per_source = 1) const;
  // The same over a source encoded already (a stream's states [B, S, D]; no summary: the
  // decoder starts as online decoding's does).
  DecoderState start(Graph& g, Var states, std::span<const int32_t> lengths) const;
  // The same over a stream's memory as heard so far (one row): `heard` holds the memory and the
  // keys attention().start() made of each position when it was heard, kept by the stream.
  DecoderState start_heard(Graph& g, AttentionState heard) const;
  using Scores = heed::Scores;
  Step step(Graph& g, std::span<const int32_t> prev, const DecoderState& state,
            Scores scores = Scores::LogProbs) const;
  // Frees everything the graph made since `encoded` (a mark taken after start()) except the
  // decoder state, which is carried over: decoding then runs in the memory of one step.
  static void recycle(Graph& g, const Graph::Mark& encoded, DecoderState& state);
  // The attention mechanism with this model's weights (const: its state is the decoder's).
  const Attention& attention() const { return *attention_; }

 private:
  // start's second half: the decoder state over an encoded source of `lengths` rows
  DecoderState start_encoded(Graph& g, const SequenceEncoder::Output& enc,
                             std::span<const int32_t> lengths, int64_t rows_per_source) const;
  // its last part: the decoder's first state of B rows beside their attention's
  DecoderState start_attending(Graph& g, AttentionState attention, Var summary,
                               int64_t rows_per_source) const;
  // One decoder step, shared by step() and the teacher-forced loss(): from the target-side
  // input projection gy [B, G H] and embedding y [B, E] of y_{t-1}, advances `st` and returns
  // the read-out input, [s_i ; c_i ; E y_{i-1}] (Bahdanau style), h~_t (Luong style) or s_i
  // (exact hard attention); `attended` gets the attention's step (alpha [B, S], ...). With
  // REINFORCE's expected baseline (hard attention: Bahdanau style), `expected` gets the read-out
  // input the same step would have made with the expected context in place of the sampled one
  // (st advances with the sample).
  Var advance(Graph& g, Var gy, Var y, DecoderState& st, Attended& attended,
              Var* expected = nullptr) const;
  // Exact hard attention: the decoder's share of every position's read-out from o = s_i
  // [..., H_d] and y = E y_{i-1} [..., E], W_s s_i + W_y E y_{i-1} + b: the logits' [..., V]
  // (concat) or the maxout layer's pre-activations' [..., 2l] (maxout).
  Var hard_base(Var o, Var y) const;
  // Exact hard attention's scores of one step from its base [B, V or 2l]: log p(y_i) summed
  // over j in training (and in decoding with --hard-marginal), the chosen j's logits in argmax
  // decoding.
  Var hard_scores(Var base, const DecoderState& st, const Attended& a) const;
  // The maxout layer: t_j = max(t~_2j, t~_2j+1), [..., 2l] -> [..., l].
  Var maxout(Var pre) const;
  // The dropout streams of a read-out (its input's, the maxout layer's): two read-outs given
  // the same streams drop the same entries of same-shaped inputs.
  struct ReadoutStreams {
    uint64_t input = 0, maxout = 0;
  };
  ReadoutStreams readout_streams(Graph& g) const;
  // The logits [..., V] of read-out inputs o [..., *] (step and loss alike; not hard-exact),
  // and the input of their last product W . + b (o itself, or the maxout layer's t).
  Var read_out(Var o) const;
  Var read_out(Var o, const ReadoutStreams& streams) const;
  Var read_out_input(Var o, const ReadoutStreams& streams) const;
  // REINFORCE's term for hard attention trained by sampling (nn/reinforce.h), its rewards the
  // log-likelihoods of the target tokens under `logits` [T, B, V]; its baselines theirs under
  // `expected_logits` [T, B, V] (the expected baseline) or the moving averages.
  Var reinforce_term(Graph& g, Var logits, Var expected_logits, const Seq2SeqBatch& b,
                     const std::vector<Attended>& steps) const;
  // Monotonic attention against latency: the weight of `terms` (config_.latency at the batch's
  // update) times the mean expected delay of every step's expected alignment
  // (nn/latency_loss.h, one head), over the memory's positions.
  Var latency_term(const Seq2SeqBatch& b, const Memory& memory, std::span<const Attended> steps,
                   const LatencyLoss& terms) const;
  RnnSeq2SeqConfig config_;
  std::unique_ptr<AudioFrontEnd> front_;      // a recognizer's (Listen, Attend and Spell)
  std::optional<JointCtcHead> ctc_;           // joint CTC-attention's head (--ctc-weight)
  std::unique_ptr<SequenceEncoder> encoder_;  // annotations and their summary
  RnnCell dec_cell_;
  Parameter* tgt_embed_;         // [V, E]
  Parameter *init_W_, *init_b_;  // s_0 = tanh(W [->h ; <-h] + b): [H_d, Dm'], [H_d] (online
                                 // models: s_0 = tanh(b))
  Parameter* feed_W_;            // context (Bahdanau) or h~ (Luong) into the gates: [G H_d, *]
  Parameter *out_W_, *out_b_;    // read-out: [V, *], [V] (exact hard attention: W_s [V, H_d];
                                 // maxout: W_o [V, l])
  Parameter *maxout_W_ = nullptr, *maxout_b_ = nullptr;  // maxout: W_t [2l, *] (exact hard
                                                         // attention: W_s [2l, H_d]), b_t [2l]
  Parameter *mix_W_ = nullptr, *out_Wy_ = nullptr;       // exact hard attention: W_c [V or 2l,
                                                         // Dm], W_y [V or 2l, E]
  mutable ReinforceBaseline baseline_;  // hard attention trained by REINFORCE (one training
                                        // thread per model)
  Parameter* comb_W_ = nullptr;         // Luong W_c: [H_d, Dm + H_d]
  std::unique_ptr<const Attention> attention_;
};

}  // namespace heed
