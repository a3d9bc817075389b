// `heed bench ctc`: the workloads of ../shared/bench/pytorch/ctc_bench.py, printing its JSON
// fields, one line per measurement:
//   ctc_loss          per T x B x V x L shape (input lengths uniform in [T/2, T], at least
//                     2 L_b + 1; target lengths in [L/2, L]; labels uniform in [1, V)): the loss
//                     (log-softmax included, mean reduction, zero_infinity) forward, and
//                     forward + backward to the logits; median ms over `reps` after 2 warm-ups
//   bilstm_ctc_train  the G2P-sized BiLSTM-CTC (embedding 30 x 64, each position repeated
//                     `upsample` times, 2 bidirectional LSTM layers of 256, linear to 70 classes,
//                     the blank included): Adam 1e-3, clip 1.0, batches of `batch` words of 3-14
//                     letters with letters +- 2 phones; target labels per second over `steps`
//                     steps after 3 warm-ups
//   bilstm_ctc_greedy best-path decoding of the same batches, words per second
// --precision bfloat16 and --compute-type int8 measure heed's mixed-precision training and int8
// decoding on the same workload (the lines say which).
// Synthetic data from heed's own generator (the same distributions as the peer's numpy draws).
// Leaves out: the prefix beam search (the peer has none).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>

#include "heed/autograd/graph.h"
#include "heed/decode/translator.h"

namespace heed {

struct CtcBenchOptions {
  std::string shapes = "50x64x70x14,200x32x40x60,500x16x32x120,200x16x1000x40";
  int reps = 10;
  int64_t batch = 128;
  int steps = 30;
  int64_t upsample = 2;
  uint64_t seed = 1;
  bool skip_model = false;
  Precision precision = Precision::fp32;       // the model's training products (kernels/bf16.h)
  ComputeType compute = ComputeType::Float32;  // its decoding weights (kernels/quantize.h)
};

void run_ctc_bench(const CtcBenchOptions& options, std::ostream& out);

}  // namespace heed
