// Joint CTC-attention decoding (Watanabe et al. 2017, section 3.3; ESPnet's): an attention
// decoder whose encoder also feeds a CTC head (Kim, Hori & Watanabe 2017's multi-task model)
// scores each candidate c of a prefix g by
//   (1 - lambda) log p_att(c | g, x) + lambda (log psi(g c) - log psi(g)),
// psi the CTC prefix probability (kernels/ctc_prefix.h) and, for <eos>, log p_ctc(g | x) in its
// place, so that a hypothesis's summed score is (1 - lambda) log p_att(y | x) + lambda
// log p_ctc(y | x). CTC's monotonic alignment keeps the attention decoder from looping or
// stopping early on long utterances. Any search over IncrementalDecoder (greedy, beam) runs it
// unchanged: this decoder wraps the attention model's own and follows its rows (reorder,
// drop_rows).
// Joint CTC-MoChA (hard monotonic attention or MoChA, with a lookahead D >= 0): step i's
// attention stops on position j_i, and CTC scores the candidates over the positions up to
// tau_i = j_i + 1 + D alone (kernels/ctc_prefix.h's truncated psi_tau; at most the utterance,
// and all of it for a step that runs off its end),
//   (1 - lambda) log p_att(c | g, x) + lambda (log psi_tau(g c) - log psi_tau(g)),
// <eos> with log p_T(g) once tau_i reaches the end (T), and not at all before: CTC's p_tau(g)
// says that nothing follows g up to tau, not that the utterance ends there (taken for <eos>, it
// ends transcripts early). The step reads no audio past tau_i (and needs to know only whether
// the audio ends at tau_i when <eos> would win), so a stream decodes it as the audio comes
// (models/rnn_seq2seq.cc's RnnAttentionStream), as Moritz, Hori & Le Roux 2019's triggered
// attention bounds its decoder's view by CTC's. With D = -1: the whole utterance. The head itself,
// JointCtcHead, is what a family adds to its encoder to be trained jointly
// (--ctc-weight): rnn (Listen, Attend and Spell) and transformer (the Speech-Transformer) do.
// Leaves out: the models (models/rnn_seq2seq.h, models/transformer_seq2seq.h).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "heed/kernels/ctc_prefix.h"
#include "heed/models/seq2seq.h"
#include "heed/nn/init.h"

namespace heed {

// The CTC head of a joint model (Kim, Hori & Watanabe 2017, eq. 9's CTC term), on the encoder's
// annotations h_j:
//   p_ctc(. | h_j) = softmax(W h_j + b)                       [B, S, V], the blank the padding id
//   L_ctc = -sum_b log p_ctc(y_b | x_b) / (target tokens)     y without <eos>
class JointCtcHead {
 public:
  JointCtcHead(int64_t width, int64_t vocab, const Scope& scope);  // "ctc/W" [V, D], "ctc/b" [V]
  // annotations [B, S, D], row b's first lengths[b] real -> L_ctc (a scalar)
  Var loss(const Seq2SeqBatch& b, Var annotations, std::span<const int32_t> lengths,
           float dropout) const;
  // `inner`, an attention decoder of R rows, wrapped into joint decoding at weight lambda over
  // its rows' annotations [R, S, D] (copied out of the graph: the decoder's steps rewind past them)
  // (lookahead >= 0: joint CTC-MoChA, its steps truncated as above)
  std::unique_ptr<IncrementalDecoder> decoder(std::unique_ptr<IncrementalDecoder> inner,
                                              Var annotations, std::span<const int32_t> lengths,
                                              float lambda, int64_t lookahead = -1) const;
  // log p_ctc(. | h_j) of states [n, D] -> [n, V] (a stream's positions as they come)
  std::vector<float> log_probs(std::span<const float> states, int64_t D) const;

 private:
  Parameter *W_, *b_;
};

// One step's joint scores into out [V]: (1 - lambda) att[c] + lambda (psi[c] - psi_g), psi the
// CTC prefix scores of each extension (<eos>'s: the labelling's), psi_g the prefix's; <bos>,
// the blank and what CTC cannot emit are -inf; lambda 0 gives att, bit for bit, and so does a
// step where CTC can emit nothing (a prefix longer than the frames it reads: MoChA's stops can
// outrun CTC's horizon early on).
void joint_scores(const float* att, std::span<const float> psi, float psi_g, float lambda,
                  int32_t blank, std::span<float> out);

// Where a hard monotonic step stopped: the last position of its weights' row [S] that is not 0
// (MoChA's chunk ends there); -1 when it ran off the end.
int64_t attention_stop(const float* weights, int64_t S);

class JointCtcDecoder final : public IncrementalDecoder {
 public:
  // inner: the attention decoder of R rows; log_probs [R, S, V] the CTC head's frames of each
  // row (row r's first lengths[r] real); lambda in [0, 1]
  // lookahead >= 0: joint CTC-MoChA (the inner decoder gives its weights, each row ending at its
  // stop)
  JointCtcDecoder(std::unique_ptr<IncrementalDecoder> inner, const Tensor& log_probs,
                  std::span<const int32_t> lengths, int32_t blank, float lambda,
                  int64_t lookahead = -1);
  Step step(std::span<const int32_t> prev, Scores scores) override;
  void reorder(std::span<const int32_t> from) override;
  bool drop_rows(std::span<const int32_t> keep) override;

 private:
  struct Row {
    std::vector<float> log_probs;  // [T, V]
    int64_t T = 0;
    kernels::CtcPrefixScorer::Prefix prefix;
  };
  // the frames CTC reads for row r at this step: tau (above), or T
  int64_t horizon(const Step& inner, int64_t r, int64_t T) const;
  kernels::CtcPrefixScorer scorer(const Row& r) const {
    return {r.log_probs.data(), r.T, V_, blank_};
  }
  std::unique_ptr<IncrementalDecoder> inner_;
  std::vector<Row> rows_;
  int64_t V_;
  int32_t blank_;
  float lambda_;
  int64_t lookahead_;
  int64_t S_ = 0;  // the padded source's positions (a row of the weights)
  int64_t t_ = 0;
  std::vector<float> scores_;  // [R, V] what step() returns
  std::vector<float> psi_;     // [V] scratch
};

}  // namespace heed
