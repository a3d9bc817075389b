// REINFORCE (Williams 1992) for a choice made at every output step, as Xu et al. 2015 (section
// 4.1, eq. 10-12) train hard attention: with the choices a ~ pi and the reward R the log-
// likelihood of the target, the gradient of E[R] is E[(R - b) d log pi(a)], for any baseline b
// that does not depend on a. Here the return of step t is the reward to go, R_t = sum_{t' >= t}
// log p(y_t'), since a choice at step t changes no earlier output (an unbiased, lower-variance
// form of Xu et al.'s whole-sequence R), and the baseline a moving average of the log-likelihood
// per token times the tokens to go.
// Leaves out: the sampling (nn/attention/hard.cc) and the decoder that calls this
// (models/rnn_seq2seq).
#pragma once

#include <cstdint>
#include <limits>
#include <span>

#include "heed/autograd/graph.h"

namespace heed {

// b_k = 0.9 b_{k-1} + 0.1 (mean log-likelihood per token of batch k) (Xu et al. eq. 12: a
// moving average; the first batch's mean starts it).
class ReinforceBaseline {
 public:
  double per_token() const { return b_; }  // NaN before the first update
  void update(double mean_token_log_likelihood);

 private:
  double b_ = std::numeric_limits<double>::quiet_NaN();
};

// A_tb = R_tb - n_tb b for the real steps of each sequence (tokens [T, B] time-major, `pad`
// after its end): R_tb = sum_{t' >= t} rewards[t', b], n_tb the real steps from t on; 0 on
// padding. -> [T, B] in the graph's arena.
Tensor reinforce_advantage(Graph& g, std::span<const float> rewards,
                           std::span<const int32_t> tokens, int32_t pad, int64_t T, int64_t B,
                           double baseline_per_token);

// The term whose value is 0 and whose gradient is REINFORCE's estimate of the gradient of
// -E[R] / norm: -(1/norm) sum_tb advantage_tb d log_probs_tb (log_probs [T, B]: log pi of each
// step's choice, 0 where none was sampled).
Var reinforce_surrogate(Var log_probs, const Tensor& advantage, float norm);

}  // namespace heed
