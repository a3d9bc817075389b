// Training monotonic attention against latency (Ma, Pino, Cross, Puzon & Gu 2020, "Monotonic
// Multihead Attention", section 2.3; Arivazhagan et al. 2019 train MILk against an expected
// latency the same way), for any decoder whose monotonic heads give their expected alignments
// alpha^h_i (one head for the RNN's monotonic attention and MoChA, every cross-attention head of
// every layer for the Transformer's). A head's expected delay at output i, in source tokens read
// before writing it (a head that runs off the end has read the whole source):
//   E[d^h_i] = sum_j (j + 1) alpha^h_ij + |x| (1 - sum_j alpha^h_ij)
// and the terms added to the loss:
//   L = -log p(y | x) + lambda_avg L_avg + lambda_var L_var
//   L_avg = sum_b |y_b| G_b / sum_b |y_b|,  A^h_b = mean_i E[d^h_{b,i}]
//     G_b = mean_h A^h_b                                   (--latency-gather mean)
//     G_b = sum_h softmax_h(A_b)^h A^h_b                   (weighted: a soft maximum)
//   L_var = mean over real outputs of Var_h E[d^h_{b,i}]   (the heads kept together)
// Online decoding waits for the furthest head: the weighted average puts the pressure on the
// heads that set the delay, where the plain mean can be lowered by heads that stop at the
// first token and attend to nothing else. With one head both gathers are A_b and L_var is 0.
// Leaves out: the latency of a head as DAL of its delays (here their mean) and head pruning;
// the latency metrics of decoded output (metrics/latency.h).
#pragma once

#include <cstdint>
#include <span>

#include <nlohmann/json.hpp>

#include "heed/autograd/graph.h"
#include "heed/util/names.h"

namespace heed {

// L_avg over the heads of a sentence: their mean, or their softmax-weighted average.
enum class LatencyGather { Mean, Weighted };
std::span<const Named<LatencyGather>> names(LatencyGather);  // "mean" | "weighted"

struct LatencyLoss {
  float weight = 0.f;                          // lambda_avg: training adds lambda_avg L_avg
  LatencyGather gather = LatencyGather::Mean;  // how L_avg gathers the heads of a sentence
  float var_weight = 0.f;                      // lambda_var: training adds lambda_var L_var
  // Updates over which both weights ramp up linearly from 0 (0: full from the first update), so
  // that the decoder learns to use its context before the term pushes the stops back: from the
  // first update a weight too large locks the stops onto the first words (MILk at 0.05, MMA-H at
  // 0.1 in docs/RESULTS.md).
  int64_t warmup = 0;
  bool trains() const { return weight > 0.f || var_weight > 0.f; }
  // The weights at update `step` (0-based): lambda min(1, step / warmup)
  LatencyLoss at_step(int64_t step) const;
  // Written into (read from, checked) a model's config.json object as monotonic_latency,
  // _gather, _var and _warmup, each only when it is not its default: one form for every family
  void to_json(nlohmann::json& j) const;
  static LatencyLoss from_json(const nlohmann::json& j);
};

// The expected delays E[d^h_i] (above) [B, H, T] of the expected alignments `alignments`
// [B, H T, S] (head h's step i in row h T + i) over sources of `key_lengths` and targets of
// `tgt_lengths`: 0 on padding steps; padding entries of a row must hold 0.
Var expected_delays(Var alignments, int64_t H, std::span<const int32_t> key_lengths,
                    std::span<const int32_t> tgt_lengths);

// lambda_avg L_avg + lambda_var L_var (above, a scalar) from the delays of every monotonic
// layer ([B, h, T] each, side by side as heads) of targets of lengths `tgt_lengths`.
Var monotonic_latency_loss(std::span<const Var> delays, std::span<const int32_t> tgt_lengths,
                           const LatencyLoss& c);

}  // namespace heed
