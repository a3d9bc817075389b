// `heed bench conv`: the workloads of ../shared/bench/pytorch/conv_bench.py, printing its JSON
// fields, one line per measurement:
//   kim_cnn  Kim 2014's CNN-rand (models/sentence_classifier.h, --model kim-cnn): embeddings
//            16000 x 300, widths 3, 4, 5 of 100 maps, ReLU, max over time, dropout 0.5, linear to
//            5 classes; batches of 50 sentences of 5-50 words; training sentences/s over `steps`
//            steps after 3 warm-ups (the optimizer: `optimizer`, Adadelta as the peer's and the
//            paper's), then inference sentences/s on the same batches
//   tcn      a causal dilated gated convolution stack as a language model (nn/gated_conv.h):
//            embeddings V x C, L blocks (conv C -> 2C of kernel k and dilation 2^(l mod 8),
//            tanh (.) sigmoid, 1x1 conv, residual), linear to V; Adam 1e-3 on batches of
//            `batch` x `len` tokens, target tokens/s; then greedy generation of `gen_len`
//            tokens at batch 1 with the per-layer queues (fast WaveNet generation), tokens/s as
//            `gen_tok_per_s` (the peer recomputes the prefix: `gen_tok_per_s_recompute`)
// --precision bfloat16: heed's mixed-precision training on the same workloads (the lines say
// which). Synthetic data from heed's own generator (the peer's distributions).
// Leaves out: the peer's own numbers (../shared/bench/pytorch/run.sh prints them).
#pragma once

#include <iosfwd>
#include <string>

#include "heed/autograd/graph.h"
#include "heed/decode/translator.h"
#include "heed/train/optimizer.h"

namespace heed {

struct ConvBenchOptions {
  std::string only;  // "kim" | "tcn" | "" (both)
  int steps = 20;
  int64_t channels = 256, kernel = 3, layers = 8;  // tcn
  int64_t batch = 16, len = 256, gen_len = 256;    // tcn
  OptimizerConfig::Kind kim_optimizer = OptimizerConfig::Kind::Adadelta;
  Precision precision = Precision::fp32;       // the training products (kernels/bf16.h)
  ComputeType compute = ComputeType::Float32;  // tcn generation's weights (kernels/quantize.h)
  uint64_t seed = 1;
};

void run_conv_bench(const ConvBenchOptions& options, std::ostream& out);

}  // namespace heed
