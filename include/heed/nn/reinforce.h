// REINFORCE (Williams 1992) for a choice made at every output step, as Xu et al. 2015 (section
// 4.1, eq. 10-12) train hard attention: with the choices a ~ pi and the reward R the log-
// likelihood of the target, the gradient of E[R] is E[(R - b) d log pi(a)], for any baseline b
// that does not depend on a. Here the return of step t is the reward to go, R_t = sum_{t' >= t}
// log p(y_t'), since a choice at step t changes no earlier output (an unbiased, lower-variance
// form of Xu et al.'s whole-sequence R), and the baseline a moving average of the log-likelihood
// per token times the tokens to go. Two variance reductions are options: a baseline per target
// word (a moving average of log p(y) for each vocabulary entry: the word's difficulty, which no
// choice of position changes, leaves the advantage) and a discount gamma on the return,
// R_t = sum_{t' >= t} gamma^(t'-t) log p(y_t') (0: the step's own output only; biased, as it
// ignores what the choice does to later steps through the decoder's state).
// Leaves out: the sampling (nn/attention/hard.cc) and the decoder that calls this
// (models/rnn_seq2seq).
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "heed/autograd/graph.h"

namespace heed {

// b_k = 0.9 b_{k-1} + 0.1 (mean log-likelihood per token of batch k) (Xu et al. eq. 12: a
// moving average; the first batch's mean starts it). Per word: the same average for each target
// word over the batches it occurs in (a word not seen yet takes the global one).
class ReinforceBaseline {
 public:
  explicit ReinforceBaseline(int64_t words = 0);  // words > 0: one baseline per target word
  double per_token() const { return b_; }         // NaN before the first update
  // The baseline of each step's reward (tokens [T, B], 0 on `pad`), before this batch's update.
  std::vector<float> of(std::span<const int32_t> tokens, int32_t pad) const;
  // Folds in one batch: its rewards [T, B] and target tokens.
  void update(std::span<const float> rewards, std::span<const int32_t> tokens, int32_t pad);

 private:
  double b_ = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> word_;  // [words], NaN until the word is seen
};

// A_tb = sum_{t' >= t} gamma^(t'-t) (rewards[t', b] - baselines[t', b]) for the real steps of
// each sequence (tokens [T, B] time-major, `pad` after its end); 0 on padding. With gamma 1 and
// one baseline b: R_tb - n_tb b, n_tb the real steps from t on. -> [T, B] in the graph's arena.
Tensor reinforce_advantage(Graph& g, std::span<const float> rewards,
                           std::span<const float> baselines, std::span<const int32_t> tokens,
                           int32_t pad, int64_t T, int64_t B, float gamma = 1.f);

// The term whose value is 0 and whose gradient is REINFORCE's estimate of the gradient of
// -E[R] / norm: -(1/norm) sum_tb advantage_tb d log_probs_tb (log_probs [T, B]: log pi of each
// step's choice, 0 where none was sampled).
Var reinforce_surrogate(Var log_probs, const Tensor& advantage, float norm);

}  // namespace heed
