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
// Leaves out: the models (models/rnn_seq2seq.h adds it for a model trained with --ctc-weight).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "heed/kernels/ctc_prefix.h"
#include "heed/models/seq2seq.h"

namespace heed {

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
