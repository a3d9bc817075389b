// The expected delays of monotonic heads and the latency terms built on them (see the header).
// Leaves out: the expected alignments themselves (kernels/monotonic.cc).
#include "heed/nn/latency_loss.h"

#include <algorithm>
#include <cmath>

#include "heed/autograd/ops.h"
#include "heed/util/error.h"
#include "heed/util/json.h"

namespace heed {

std::span<const Named<LatencyGather>> names(LatencyGather) {
  static constexpr Named<LatencyGather> kNames[] = {{LatencyGather::Mean, "mean"},
                                                    {LatencyGather::Weighted, "weighted"}};
  return kNames;
}

void LatencyLoss::to_json(nlohmann::json& j) const {
  if (weight > 0.f) j["monotonic_latency"] = json_number(weight);
  if (gather != LatencyGather::Mean) j["monotonic_latency_gather"] = name_of(gather);
  if (var_weight > 0.f) j["monotonic_latency_var"] = json_number(var_weight);
  if (warmup > 0) j["monotonic_latency_warmup"] = warmup;
}

LatencyLoss LatencyLoss::from_json(const nlohmann::json& j) {
  const LatencyLoss l{.weight = j.value("monotonic_latency", 0.f),
                      .gather = parse_name<LatencyGather>(
                          j.value("monotonic_latency_gather", "mean"), "monotonic_latency_gather"),
                      .var_weight = j.value("monotonic_latency_var", 0.f),
                      .warmup = j.value("monotonic_latency_warmup", int64_t{0})};
  check(l.weight >= 0.f && std::isfinite(l.weight), "config.json: monotonic_latency is ", l.weight,
        " (a weight >= 0)");
  check(l.var_weight >= 0.f && std::isfinite(l.var_weight),
        "config.json: monotonic_latency_var is ", l.var_weight, " (a weight >= 0)");
  check(l.warmup >= 0, "config.json: monotonic_latency_warmup is ", l.warmup, " (updates >= 0)");
  return l;
}

Var expected_delays(Var alignments, int64_t H, std::span<const int32_t> key_lengths,
                    std::span<const int32_t> tgt_lengths) {
  Graph& g = alignments.graph();
  const int64_t B = alignments.dim(0), S = alignments.dim(2), T = alignments.dim(1) / H;
  check(H > 0 && alignments.dim(1) == H * T && static_cast<int64_t>(key_lengths.size()) == B &&
            static_cast<int64_t>(tgt_lengths.size()) == B,
        "expected_delays: alignments ", alignments.shape(), " for ", H, " heads, ",
        key_lengths.size(), " sources and ", tgt_lengths.size(), " targets");
  // E[d^h_i] = |x| - sum_j alpha^h_ij (|x| - j - 1) on real steps, 0 on padding
  Tensor left = g.zeros(Shape{B, 1, S});  // |x| - j - 1: the tokens not read at stop j
  Tensor real = g.zeros(Shape{B, 1, T});  // 1 on real steps
  Tensor read = g.zeros(Shape{B, 1, T});  // |x| on real steps
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t j = 0; j < key_lengths[b]; ++j)
      left.data()[b * S + j] = static_cast<float>(key_lengths[b] - j - 1);
    for (int64_t i = 0; i < tgt_lengths[b]; ++i) {
      real.data()[b * T + i] = 1.f;
      read.data()[b * T + i] = static_cast<float>(key_lengths[b]);
    }
  }
  Var saved = sum(alignments * g.constant(left), 2);                            // [B, H T]
  return g.constant(read) - reshape(saved, Shape{B, H, T}) * g.constant(real);  // [B, H, T]
}

LatencyLoss LatencyLoss::at_step(int64_t step) const {
  if (warmup <= 0 || step >= warmup) return *this;
  const float ramp = static_cast<float>(std::max<int64_t>(step, 0)) / static_cast<float>(warmup);
  LatencyLoss c = *this;
  c.weight *= ramp;
  c.var_weight *= ramp;
  return c;
}

Var monotonic_latency_loss(std::span<const Var> delays, std::span<const int32_t> tgt_lengths,
                           const LatencyLoss& c) {
  check(!delays.empty(), "monotonic_latency_loss: no monotonic layer's delays");
  Graph& g = delays.front().graph();
  Var D = concat(delays, 1);  // E[d^{l,h}_{b,i}], the heads of every layer side by side  [B, H, T]
  const int64_t B = D.dim(0), H = D.dim(1), T = D.dim(2);
  check(static_cast<int64_t>(tgt_lengths.size()) == B,
        "monotonic_latency_loss: ", tgt_lengths.size(), " target lengths for a batch of ", B);
  int64_t N = 0;  // real outputs
  for (int32_t n : tgt_lengths) N += n;
  check(N > 0, "monotonic_latency_loss: no target tokens");
  Var loss;
  if (c.weight > 0.f) {
    // A^{l,h}_b = mean_i E[d^{l,h}_{b,i}]                                            [B, H]
    Tensor per_step = g.zeros(Shape{B, 1, T});  // 1 / |y_b| on real steps
    Tensor share = g.alloc(Shape{B});           // |y_b| / N: a sentence's share of the outputs
    for (int64_t b = 0; b < B; ++b) {
      for (int64_t i = 0; i < tgt_lengths[b]; ++i)
        per_step.data()[b * T + i] = 1.f / static_cast<float>(tgt_lengths[b]);
      share.data()[b] = static_cast<float>(tgt_lengths[b]) / static_cast<float>(N);
    }
    Var A = sum(D * g.constant(per_step), 2);  // [B, H]
    // G_b: the heads' mean, or their softmax-weighted average (a soft maximum)          [B]
    Var G = c.gather == LatencyGather::Weighted ? sum(softmax(A) * A, 1) : mean(A, 1);
    loss = sum_all(G * g.constant(share)) * c.weight;  // L_avg, each sentence by its outputs
  }
  if (c.var_weight > 0.f) {
    // Var_{l,h} E[d^{l,h}_{b,i}] = mean_{l,h} (E[d] - mean_{l,h} E[d])^2, averaged over the real
    // outputs (padding steps are 0 for every head: no variance)
    Var centred = D - mean(D, 1, /*keepdim=*/true);  // [B, H, T]
    Var var = sum_all(centred * centred) * (1.f / static_cast<float>(H * N));
    Var term = var * c.var_weight;
    loss = loss.valid() ? loss + term : term;
  }
  check(loss.valid(), "monotonic_latency_loss: neither weight is positive");
  return loss;
}

}  // namespace heed
