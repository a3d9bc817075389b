// The toy GRU encoder-decoder (Cho et al. 2014) on sequence reversal.
// Leaves out: padding (each batch has one length) and attention.
#include "heed/models/toy_reverse.h"

#include <algorithm>
#include <cstdio>
#include <string>

#include "heed/autograd/ops.h"
#include "heed/kernels/vmath.h"
#include "heed/util/error.h"

namespace heed::toy {

Batch sample_batch(const ReverseTask& task, int64_t B, Rng& rng) {
  check(task.symbols >= 1 && task.min_len >= 1 && task.max_len >= task.min_len && B >= 1,
        "reverse task: need symbols >= 1, 1 <= min_len <= max_len and a batch >= 1 (got ",
        task.symbols, " symbols, lengths ", task.min_len, "-", task.max_len, ", batch ", B, ")");
  Batch b;
  b.B = B;
  b.S = task.min_len + rng.below(task.max_len - task.min_len + 1);
  b.src.resize(b.S * B);
  b.tgt.resize((b.S + 1) * B);
  for (int64_t i = 0; i < B; ++i) {
    for (int64_t t = 0; t < b.S; ++t)
      b.src[t * B + i] = kFirstSymbol + static_cast<int32_t>(rng.below(task.symbols));
    for (int64_t t = 0; t < b.S; ++t) b.tgt[t * B + i] = b.src[(b.S - 1 - t) * B + i];
    b.tgt[b.S * B + i] = kEos;
  }
  return b;
}

GruSeq2Seq::GruSeq2Seq(const GruSeq2SeqConfig& c, const Scope& scope) : config_(c) {
  const int64_t V = c.vocab, E = c.embed, H = c.hidden;
  Scope enc = scope / "encoder", dec = scope / "decoder";
  src_emb_ = &enc.param("embed", {V, E}, Init::normal(0.1f), /*row_sparse=*/true);
  enc_W_ = &enc.param("gru/W", {3 * H, E}, Init::glorot_uniform());
  enc_b_ = &enc.param("gru/b", {3 * H}, Init::zeros());
  enc_U_ = &enc.param("gru/U", {3 * H, H}, Init::orthogonal(3));
  enc_bh_ = &enc.param("gru/b_h", {3 * H}, Init::zeros());
  tgt_emb_ = &dec.param("embed", {V, E}, Init::normal(0.1f), /*row_sparse=*/true);
  dec_W_ = &dec.param("gru/W", {3 * H, E}, Init::glorot_uniform());
  dec_b_ = &dec.param("gru/b", {3 * H}, Init::zeros());
  dec_C_ = &dec.param("gru/C", {3 * H, H}, Init::glorot_uniform());
  dec_U_ = &dec.param("gru/U", {3 * H, H}, Init::orthogonal(3));
  dec_bh_ = &dec.param("gru/b_h", {3 * H}, Init::zeros());
  init_W_ = &dec.param("init/W", {H, H}, Init::glorot_uniform());
  init_b_ = &dec.param("init/b", {H}, Init::zeros());
  out_W_ = &dec.param("out/W", {V, H}, Init::glorot_uniform());
  out_b_ = &dec.param("out/b", {V}, Init::zeros());
}

Var GruSeq2Seq::encode(Graph& g, const Batch& b) const {
  const int64_t H = config_.hidden;
  // All input projections at once: gx [S, B, 3H] = emb(x) W^T + b
  Var x = embedding(g.param(*src_emb_), b.src, Shape{b.S, b.B});  // [S, B, E]
  Var gx = linear(x, g.param(*enc_W_), g.param(*enc_b_));         // [S, B, 3H]
  Var U = g.param(*enc_U_), bh = g.param(*enc_bh_);
  Var h = g.constant(g.zeros(Shape{b.B, H}));  // h_0 = 0 [B, H]
  for (int64_t t = 0; t < b.S; ++t) h = gru_cell(select(gx, 0, t), h, U, bh);
  return h;  // c = h_S [B, H]
}

Var GruSeq2Seq::step(Graph& g, Var y_prev_gx, Var context_gx, Var s) const {
  return gru_cell(add(y_prev_gx, context_gx), s, g.param(*dec_U_), g.param(*dec_bh_));
}

Var GruSeq2Seq::loss(Graph& g, const Batch& b) const {
  const int64_t T = b.S + 1, H = config_.hidden;
  Var c = encode(g, b);                                           // [B, H]
  Var s = tanh(linear(c, g.param(*init_W_), g.param(*init_b_)));  // s_0 [B, H]
  Var cg = linear(c, g.param(*dec_C_));                           // C c [B, 3H], once per batch
  // Teacher forcing: decoder inputs are BOS, y_1 .. y_{T-1}
  std::vector<int32_t> prev(T * b.B, kBos);
  std::copy(b.tgt.begin(), b.tgt.end() - b.B, prev.begin() + b.B);
  Var y = embedding(g.param(*tgt_emb_), prev, Shape{T, b.B});  // [T, B, E]
  Var gy = linear(y, g.param(*dec_W_), g.param(*dec_b_));      // [T, B, 3H]
  std::vector<Var> states;
  for (int64_t t = 0; t < T; ++t) {
    s = step(g, select(gy, 0, t), cg, s);
    states.push_back(reshape(s, Shape{1, b.B, H}));
  }
  Var all = concat(states, 0);                                   // [T, B, H]
  Var logits = linear(all, g.param(*out_W_), g.param(*out_b_));  // [T, B, V]
  return cross_entropy(logits, b.tgt);
}

std::vector<std::vector<int32_t>> GruSeq2Seq::greedy(Graph& g, const Batch& b,
                                                     int64_t max_len) const {
  Var c = encode(g, b);
  Var s = tanh(linear(c, g.param(*init_W_), g.param(*init_b_)));
  Var cg = linear(c, g.param(*dec_C_));
  std::vector<int32_t> prev(b.B, kBos);
  std::vector<std::vector<int32_t>> out(b.B);
  std::vector<bool> done(b.B, false);
  const int64_t V = config_.vocab;
  for (int64_t t = 0; t < max_len; ++t) {
    Var y = embedding(g.param(*tgt_emb_), prev, Shape{b.B});
    s = step(g, linear(y, g.param(*dec_W_), g.param(*dec_b_)), cg, s);
    const float* logits = linear(s, g.param(*out_W_), g.param(*out_b_)).value().data();  // [B, V]
    bool all_done = true;
    for (int64_t i = 0; i < b.B; ++i) {
      const float* row = logits + i * V;
      auto best = static_cast<int32_t>(vmath::argmax(row, V));
      prev[i] = best;
      if (!done[i] && best == kEos) done[i] = true;
      if (!done[i]) out[i].push_back(best);
      all_done = all_done && done[i];
    }
    if (all_done) break;
  }
  return out;
}

}  // namespace heed::toy
