// RnnCell, RnnLayer and RnnEncoder (see the header).
// Leaves out: packing by length (padding is masked instead; batches are bucketed by length,
// so little compute is spent on it).
#include "heed/nn/rnn.h"

#include <cmath>

#include "heed/autograd/ops.h"
#include "heed/util/error.h"

namespace heed {

RnnCell::RnnCell(CellKind kind, int64_t input, int64_t hidden, const Scope& s, RnnInit init)
    : kind_(kind), hidden_(hidden) {
  const int64_t G = kind == CellKind::Gru ? 3 : 4;
  if (init == RnnInit::Uniform) {  // Torch's: every entry U(-k, k), k = 1/sqrt(H)
    const Init u = Init::uniform(1.f / std::sqrt(static_cast<float>(hidden)));
    W_ = &s.param("W", {G * hidden, input}, u);
    b_ = &s.param("b", {G * hidden}, u);
    U_ = &s.param("U", {G * hidden, hidden}, u);
    bh_ = kind == CellKind::Gru ? &s.param("b_h", {G * hidden}, u) : nullptr;
    return;
  }
  W_ = &s.param("W", {G * hidden, input}, Init::glorot_uniform());
  b_ = &s.param("b", {G * hidden}, Init::zeros());
  U_ = &s.param("U", {G * hidden, hidden}, Init::orthogonal(static_cast<int>(G)));
  bh_ = kind == CellKind::Gru ? &s.param("b_h", {G * hidden}, Init::zeros()) : nullptr;
  if (kind == CellKind::Lstm)  // forget-gate bias 1 (Jozefowicz et al. 2015)
    for (int64_t j = hidden; j < 2 * hidden; ++j) b_->value.data()[j] = 1.f;
}

Var RnnCell::project(Graph& g, Var x) const {
  return linear(x, g.param(*W_), g.param(*b_));
}

RnnState RnnCell::step(Graph& g, Var gx, const RnnState& prev) const {
  if (kind_ == CellKind::Gru) return {gru_cell(gx, prev.h, g.param(*U_), g.param(*bh_)), Var()};
  LstmState s = lstm_cell(gx, prev.h, prev.c, g.param(*U_));
  return {s.h, s.c};
}

RnnState RnnCell::zero_state(Graph& g, int64_t B) const {
  Var z = g.constant(g.zeros(Shape{B, hidden_}));
  return {z, kind_ == CellKind::Lstm ? z : Var()};
}

Tensor step_mask(std::span<const int32_t> lengths, int64_t S, Graph& g) {
  const auto B = static_cast<int64_t>(lengths.size());
  Tensor m = g.alloc(Shape{S, B, 1});
  for (int64_t t = 0; t < S; ++t)
    for (int64_t b = 0; b < B; ++b) m.data()[t * B + b] = t < lengths[b] ? 1.f : 0.f;
  return m;
}

Var keep_where_padded(Var h_new, Var h_prev, Var m) {
  return h_prev + m * (h_new - h_prev);
}

RnnLayer::RnnLayer(CellKind kind, int64_t input, int64_t hidden, bool reverse, const Scope& s,
                   RnnInit init)
    : cell_(kind, input, hidden, s, init), reverse_(reverse) {}

RnnLayer::Output RnnLayer::forward(Graph& g, Var x, const Tensor& mask) const {
  const int64_t S = x.dim(0), B = x.dim(1), H = cell_.hidden();
  Var gx = cell_.project(g, x);  // [S, B, G*H]: every input projection in one GEMM
  Var masks = g.constant(mask);  // [S, B, 1]
  RnnState s = cell_.zero_state(g, B);
  std::vector<Var> out(S);
  for (int64_t k = 0; k < S; ++k) {
    int64_t t = reverse_ ? S - 1 - k : k;
    RnnState n = cell_.step(g, select(gx, 0, t), s);
    Var m = select(masks, 0, t);  // [B, 1]
    s.h = keep_where_padded(n.h, s.h, m);
    if (n.c.valid()) s.c = keep_where_padded(n.c, s.c, m);
    out[t] = reshape(s.h, Shape{1, B, H});
  }
  return {concat(out, 0), s};
}

std::span<const Named<CellKind>> names(CellKind) {
  static constexpr Named<CellKind> kNames[] = {{CellKind::Gru, "gru"}, {CellKind::Lstm, "lstm"}};
  return kNames;
}

std::span<const Named<RnnInit>> names(RnnInit) {
  static constexpr Named<RnnInit> kNames[] = {{RnnInit::Glorot, "glorot"},
                                              {RnnInit::Uniform, "uniform"}};
  return kNames;
}

const char* cell_name(CellKind k) {
  return name_of(k);
}

CellKind parse_cell(const std::string& s) {
  return parse_name<CellKind>(s, "cell");
}

RnnEncoder::RnnEncoder(const RnnEncoderConfig& c, const Scope& scope) : config_(c) {
  check(c.vocab >= 0 && c.layers >= 1, "encoder: a negative vocabulary, or no layer");
  if (c.vocab > 0)
    embed_ = &scope.param("embed", {c.vocab, c.embed}, Init::normal(0.1f), /*row_sparse=*/true);
  int64_t in = c.embed;
  for (int l = 0; l < c.layers; ++l) {
    Scope layer = scope / ("layer_" + std::to_string(l));
    fwd_.emplace_back(c.cell, in, c.hidden, false, layer / "fwd", c.init);
    if (c.bidirectional) bwd_.emplace_back(c.cell, in, c.hidden, true, layer / "bwd", c.init);
    in = annotation_dim();
  }
}

RnnEncoder::Output RnnEncoder::forward(Graph& g, std::span<const int32_t> ids, int64_t S,
                                       std::span<const int32_t> lengths) const {
  const auto B = static_cast<int64_t>(lengths.size());
  check(embed_ != nullptr, "encoder: this encoder reads vectors (a speech front end's), not ids");
  return forward_vectors(g, embedding(g.param(*embed_), ids, Shape{S, B}), lengths);  // [S, B, E]
}

RnnEncoder::Output RnnEncoder::forward_vectors(Graph& g, Var x,
                                               std::span<const int32_t> lengths) const {
  const int64_t S = x.dim(0);
  Tensor mask = step_mask(lengths, S, g);
  x = dropout(x, config_.dropout);
  Output out;
  for (size_t l = 0; l < fwd_.size(); ++l) {
    auto f = fwd_[l].forward(g, x, mask);
    out.final_fwd = f.last.h;
    if (config_.bidirectional) {
      auto b = bwd_[l].forward(g, x, mask);
      out.final_bwd = b.last.h;
      x = concat({f.states, b.states}, 2);  // h_j = [->h_j ; <-h_j]  [S, B, 2H]
    } else {
      x = f.states;
    }
    if (l + 1 < fwd_.size()) x = dropout(x, config_.dropout);
  }
  out.annotations = permute(x, {1, 0, 2});  // [B, S, Dm]
  return out;
}

}  // namespace heed
