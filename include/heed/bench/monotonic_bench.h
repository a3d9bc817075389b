// `heed bench monotonic`: the workload of ../shared/bench/pytorch/monotonic_bench.py, printing
// its JSON fields, one line per source length S:
//   the model   embeddings 40 x 64 -> a unidirectional GRU encoder of 256 -> a GRU decoder of
//               256 (Bahdanau style: the context enters the cell, the read-out sees [s_i ; c_i ;
//               E y_{i-1}]) -> 70 outputs; --attn soft (Bahdanau), monotonic (Raffel et al.
//               2017, r = -4) or mocha (Chiu & Raffel 2018, --chunk w); heed alone also
//               hard-exact, hard-reinforce, hard-gumbel (hard attention, its training; decoding
//               attends to the argmax's one annotation)
//   training    Adam 1e-3, clip 1.0, teacher forcing on batches of --batch random sources of S
//               tokens and S target tokens; train_tgt_tok_per_s = batch x S x steps / seconds
//               over --steps steps after one warm-up
//   decoding    batch 1, greedy, S output steps whatever the outputs (EOS does not stop it), the
//               encoder included; decode_ms_per_token = the time / S, after a 5-step warm-up.
//               Monotonic and MoChA decode hard, scanning from the last stop (linear time), soft
//               attention scores the whole memory every step
// heed's s_0 is tanh(b) for the unidirectional monotonic models (online: models/rnn_seq2seq.h)
// where the peer starts from the encoder's last state; a 256 x 256 GEMV either way.
// --compute-type int8 decodes with int8 weight matrices (translate --compute-type int8; the
// line says which), after training in fp32.
// --precision bfloat16 trains with bf16 products (heed train --precision bfloat16).
// Leaves out: nothing of the peer's.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>

#include "heed/decode/translator.h"

namespace heed {

struct MonotonicBenchOptions {
  std::string attn = "monotonic";  // soft | monotonic | mocha | hard-{exact,reinforce,gumbel}
  int64_t chunk = 4;
  std::string src_lens = "20,100,500";
  int64_t batch = 64;
  int steps = 5;
  uint64_t seed = 1;
  ComputeType compute = ComputeType::Float32;  // decoding weights
  Precision precision = Precision::fp32;       // training products
};

void run_monotonic_bench(const MonotonicBenchOptions& options, std::ostream& out);

}  // namespace heed
