// `heed bench attention`: the workload of ../shared/bench/pytorch/attention_bench.py through
// heed's fused attention (autograd/ops/attention.h), printing the same JSON fields: for every
// B x H x T x d shape, forward alone and forward + backward (w.r.t. Q, K and V, output
// gradient random), without and with the causal mask; median wall time over repeats sized to
// a time budget, dense-equivalent GFLOP/s (4 B H T^2 d forward, 3x that with the backward, as
// the peer counts even for causal runs) and the extra resident memory of the measurement
// (peak RSS since a reset of the kernel's high-water mark, minus the RSS before it). As the peer
// starts a process per shape, heed runs every configuration in a fresh child process of its
// own (heed's arenas keep freed memory for reuse, which would hide a later configuration's
// peak).
// Leaves out: the peer's nn.MultiheadAttention line (the Transformer benchmark covers layers).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>

namespace heed {

struct AttentionBenchOptions {
  std::string shapes = "1x8x128x64,8x8x256x64,1x8x1024x64,1x8x4096x64,1x1x8192x64";
  double budget = 1.0;  // seconds of timed work per configuration
  int min_reps = 5, max_reps = 200;
  std::string tag;    // copied into every line
  std::string child;  // internal: "BxHxTxd/mode/mask", run this one configuration here
  uint64_t seed = 0;
};

void run_attention_bench(const AttentionBenchOptions& options, std::ostream& out);

}  // namespace heed
