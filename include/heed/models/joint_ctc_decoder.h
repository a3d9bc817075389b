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
// The head itself, JointCtcHead, is what a family adds to its encoder to be trained jointly
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
  std::unique_ptr<IncrementalDecoder> decoder(std::unique_ptr<IncrementalDecoder> inner,
                                              Var annotations, std::span<const int32_t> lengths,
                                              float lambda) const;

 private:
  Parameter *W_, *b_;
};

class JointCtcDecoder final : public IncrementalDecoder {
 public:
  // inner: the attention decoder of R rows; log_probs [R, S, V] the CTC head's frames of each
  // row (row r's first lengths[r] real); lambda in [0, 1]
  JointCtcDecoder(std::unique_ptr<IncrementalDecoder> inner, const Tensor& log_probs,
                  std::span<const int32_t> lengths, int32_t blank, float lambda);
  Step step(std::span<const int32_t> prev, Scores scores) override;
  void reorder(std::span<const int32_t> from) override;
  bool drop_rows(std::span<const int32_t> keep) override;

 private:
  struct Row {
    std::vector<float> log_probs;  // [T, V]
    int64_t T = 0;
    kernels::CtcPrefixScorer::Prefix prefix;
  };
  kernels::CtcPrefixScorer scorer(const Row& r) const {
    return {r.log_probs.data(), r.T, V_, blank_};
  }
  std::unique_ptr<IncrementalDecoder> inner_;
  std::vector<Row> rows_;
  int64_t V_;
  int32_t blank_;
  float lambda_;
  int64_t t_ = 0;
  std::vector<float> scores_;  // [R, V] what step() returns
  std::vector<float> psi_;     // [V] scratch
};

}  // namespace heed
