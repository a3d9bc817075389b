// `heed bench rnn-seq2seq` and `heed bench transformer-seq2seq`: the workloads of
// ../shared/bench/pytorch/bahdanau_seq2seq.py and transformer_seq2seq.py run through heed,
// printing the same JSON fields, so that each can be compared line by line with its peer.
//   rnn-seq2seq: a bidirectional-GRU encoder, Bahdanau attention, a GRU decoder with the
//     read-out from [s ; c ; E y] (emb 256, encoder 512 per direction, decoder 512), Adam 1e-3,
//     dropout 0.5.
//   transformer-seq2seq: d_model 256, 8 heads, 3 + 3 post-LN layers, ff 512, ReLU, dropout 0.1,
//     sinusoidal positions, an untied output layer; Adam 5e-4, betas 0.9 / 0.98, eps 1e-9.
// Both: vocabularies 8000 -> 6000, synthetic batches of 128 with lengths
// clip(8 + round(Gamma(2, 2.5)), 8, 30), clipping at 1.0; training target tokens/s, then greedy
// decoding of exactly max_len steps at batch 128 and at batch 1 (the Transformer with its
// key/value cache; the peer re-runs the decoder over the prefix at every step).
// Leaves out: the "concat" attention variant of the RNN peer (heed always precomputes U h + b,
// which is the peer's "split" form; both compute the same function).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>

#include "heed/autograd/graph.h"
#include "heed/decode/translator.h"

namespace heed {

struct Seq2SeqBenchOptions {
  std::string model =
      "rnn";  // a family of models/registry.h with a peer workload: rnn, transformer
  int64_t src_vocab = 8000, tgt_vocab = 6000;
  int64_t emb = 256, enc_hid = 512, dec_hid = 512;                             // rnn
  int64_t d_model = 256, heads = 8, enc_layers = 3, dec_layers = 3, ff = 512;  // transformer
  float dropout = -1;  // < 0: the peer's (rnn 0.5, transformer 0.1)
  int64_t batch = 128;
  int warmup = 3, steps = 20, min_steps = 5;
  double train_budget = 45;  // seconds of timed training at most (after min_steps)
  int64_t max_len = 50;
  int decode_batches = 2, decode_single = 20;
  double decode_budget = 8;  // seconds per decode measurement at most
  bool skip_train = false, skip_dec128 = false, skip_dec1 = false;
  ComputeType compute = ComputeType::Float32;  // decoding weights (kernels/quantize.h)
  Precision precision = Precision::fp32;       // training products (kernels/bf16.h)
  uint64_t seed = 1234;
};

void run_seq2seq_bench(const Seq2SeqBenchOptions& options, std::ostream& out);

}  // namespace heed
