// The toy end-to-end check of the engine: a GRU encoder-decoder with the fixed-length
// bottleneck of Cho et al. 2014 (no attention) that learns to reverse short random sequences.
// `heed demo` trains it (train/toy_reverse_demo.h) and prints examples; the tests require it to
// learn the task.
// Leaves out: real data, attention and beam search (the RNN seq2seq issue builds those).
#pragma once

#include <cstdint>
#include <vector>

#include "heed/autograd/graph.h"
#include "heed/nn/init.h"

namespace heed::toy {

// Token ids: 0 BOS, 1 EOS, 2.. the task's symbols.
inline constexpr int32_t kBos = 0, kEos = 1, kFirstSymbol = 2;

struct ReverseTask {
  int symbols = 10;  // alphabet size
  int min_len = 3;   // sequence lengths are uniform in [min_len, max_len]
  int max_len = 7;
};

// A batch of equal-length sequences, time-major: src[t * B + b].
struct Batch {
  int64_t B = 0, S = 0;
  std::vector<int32_t> src;  // [S, B]
  std::vector<int32_t> tgt;  // [S + 1, B]: the reversed sequence, then EOS
};
Batch sample_batch(const ReverseTask& task, int64_t B, Rng& rng);

struct GruSeq2SeqConfig {
  int64_t vocab = 12;    // V: symbols + 2
  int64_t embed = 32;    // E
  int64_t hidden = 128;  // H
};

class GruSeq2Seq {
 public:
  GruSeq2Seq(const GruSeq2SeqConfig& config, const Scope& scope);

  // Teacher-forced mean cross-entropy of a batch.
  Var loss(Graph& g, const Batch& batch) const;
  // Greedy decoding, at most max_len tokens; returns, per sequence, the tokens before EOS.
  std::vector<std::vector<int32_t>> greedy(Graph& g, const Batch& batch, int64_t max_len) const;

 private:
  Var encode(Graph& g, const Batch& batch) const;  // c = h_S [B, H]
  // Decoder step (Cho et al. 2014, eq. 4 of the decoder): s_t = GRU([y_{t-1}; c], s_{t-1})
  Var step(Graph& g, Var y_prev_gx, Var context_gx, Var s) const;

  GruSeq2SeqConfig config_;
  Parameter *src_emb_, *tgt_emb_;                          // [V, E]
  Parameter *enc_W_, *enc_b_, *enc_U_, *enc_bh_;           // [3H, E], [3H], [3H, H], [3H]
  Parameter *dec_W_, *dec_b_, *dec_C_, *dec_U_, *dec_bh_;  // [3H, E], [3H], [3H, H], [3H, H], [3H]
  Parameter *init_W_, *init_b_;                            // s_0 = tanh(W c + b): [H, H], [H]
  Parameter *out_W_, *out_b_;                              // logits = W s + b: [V, H], [V]
};

}  // namespace heed::toy
