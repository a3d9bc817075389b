// RnnCell, RnnLayer and RnnEncoder (see the header).
// Leaves out: nothing of the padding is computed (time-major packing, as PyTorch's
// pack_padded_sequence); decoding loops (models/).
#include "heed/nn/rnn.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "heed/autograd/ops.h"
#include "heed/autograd/ops/packing.h"
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

TimeMajorPacking time_major_packing(std::span<const int32_t> lengths, int64_t S) {
  TimeMajorPacking p;
  p.S = S;
  p.B = static_cast<int64_t>(lengths.size());
  p.order.resize(lengths.size());
  std::iota(p.order.begin(), p.order.end(), 0);
  std::stable_sort(p.order.begin(), p.order.end(),
                   [&](int32_t a, int32_t b) { return lengths[a] > lengths[b]; });
  for (int64_t i = 0; i < p.B; ++i) {
    check(lengths[p.order[i]] >= 0 && lengths[p.order[i]] <= S, "rnn: a length of ",
          lengths[p.order[i]], " in a batch of ", S, " steps");
    p.identity = p.identity && p.order[i] == i;
  }
  p.batch_sizes.resize(static_cast<size_t>(S));
  p.offsets.assign(static_cast<size_t>(S) + 1, 0);
  for (int64_t t = 0; t < S; ++t) {
    int64_t n = 0;
    while (n < p.B && lengths[p.order[n]] > t) ++n;
    p.batch_sizes[t] = n;
    p.offsets[t + 1] = p.offsets[t] + n;
    for (int64_t i = 0; i < n; ++i) p.rows.push_back(static_cast<int32_t>(t * p.B + p.order[i]));
  }
  p.N = p.offsets[S];
  return p;
}

RnnLayer::RnnLayer(CellKind kind, int64_t input, int64_t hidden, bool reverse, const Scope& s,
                   RnnInit init)
    : cell_(kind, input, hidden, s, init), reverse_(reverse) {}

RnnLayer::Output RnnLayer::forward(Graph& g, Var x, const TimeMajorPacking& p) const {
  const int64_t S = p.S, B = p.B;
  Var gx = cell_.project(g, x);  // [N, G*H]: every input projection in one GEMM
  RnnState s = cell_.zero_state(g, B);
  std::vector<Var> out(S);
  for (int64_t k = 0; k < S; ++k) {
    const int64_t t = reverse_ ? S - 1 - k : k, n = p.batch_sizes[t];
    if (n == 0) continue;
    // the running sequences are rows 0 .. n-1 of the state (longest first)
    auto running = [&](Var v) { return n < B && v.valid() ? slice(v, 0, 0, n) : v; };
    const RnnState next =
        cell_.step(g, slice(gx, 0, p.offsets[t], n), {running(s.h), running(s.c)});
    out[t] = next.h;                      // [n, H]
    auto rest = [&](Var v_next, Var v) {  // the others keep theirs (ended, or not yet begun: 0)
      return n < B ? concat({v_next, slice(v, 0, n, B - n)}, 0) : v_next;
    };
    s.h = rest(next.h, s.h);
    if (next.c.valid()) s.c = rest(next.c, s.c);
  }
  std::vector<Var> steps;
  for (const Var& v : out)
    if (v.valid()) steps.push_back(v);
  return {concat(steps, 0), s};
}

Var RnnLayer::forward_from(Graph& g, Var x, RnnState& state) const {
  check(!reverse_, "rnn: a reverse layer cannot read a sequence in pieces");
  const int64_t n = x.dim(0);
  Var gx = cell_.project(g, x);  // [n, G*H]: the piece's input projections in one GEMM
  if (!state.h.valid()) state = cell_.zero_state(g, 1);
  std::vector<Var> out(static_cast<size_t>(n));
  for (int64_t t = 0; t < n; ++t) {
    state = cell_.step(g, slice(gx, 0, t, 1), state);
    out[static_cast<size_t>(t)] = state.h;  // [1, H]
  }
  return n == 1 ? out.front() : concat(out, 0);  // [n, H]
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

RnnEncoder::Stream RnnEncoder::stream() const {
  check(!config_.bidirectional,
        "encoder: a bidirectional encoder needs a sequence's last frame before its first state; "
        "a streaming one is forward-only (--unidirectional)");
  return Stream(*this);
}

RnnEncoder::Stream::Stream(const RnnEncoder& encoder) : e_(encoder) {}

Var RnnEncoder::Stream::push(Graph& g, Var x) {
  check(x.dim(1) == 1 && x.dim(2) == e_.config_.embed, "encoder stream: vectors [n, 1, ",
        e_.config_.embed, "], got ", x.shape());
  const int64_t n = x.dim(0);
  Var h = reshape(x, Shape{n, x.dim(2)});
  for (size_t l = 0; l < e_.fwd_.size(); ++l) {
    const RnnLayer& layer = e_.fwd_[l];
    RnnState s;
    if (l < h_.size()) s = {g.constant(h_[l]), layer.lstm() ? g.constant(c_[l]) : Var()};
    h = layer.forward_from(g, h, s);  // [n, H]
    // the state leaves the graph's arena: the next piece may come in another graph
    if (h_.size() <= l) {
      h_.push_back(Tensor::empty(Shape{1, layer.hidden()}));
      c_.push_back(layer.lstm() ? Tensor::empty(Shape{1, layer.hidden()}) : Tensor());
    }
    h_[l].copy_from(s.h.value());
    if (layer.lstm()) c_[l].copy_from(s.c.value());
  }
  return reshape(h, Shape{1, n, h.dim(1)});  // [1, n, H]
}

RnnEncoder::Output RnnEncoder::forward(Graph& g, std::span<const int32_t> ids, int64_t S,
                                       std::span<const int32_t> lengths) const {
  const auto B = static_cast<int64_t>(lengths.size());
  check(embed_ != nullptr, "encoder: this encoder reads vectors (a speech front end's), not ids");
  return forward_vectors(g, embedding(g.param(*embed_), ids, Shape{S, B}), lengths);  // [S, B, E]
}

RnnEncoder::Output RnnEncoder::forward_vectors(Graph& g, Var x,
                                               std::span<const int32_t> lengths) const {
  const int64_t S = x.dim(0), B = x.dim(1), E = x.dim(2);
  const TimeMajorPacking p = time_major_packing(lengths, S);
  x = dropout(x, config_.dropout);
  // [S, B, E] -> packed [N, E]: padding is never read, nor computed below
  Var h =
      p.dense() ? reshape(x, Shape{S * B, E}) : gather_rows(reshape(x, Shape{S * B, E}), p.rows);
  Output out;
  for (size_t l = 0; l < fwd_.size(); ++l) {
    auto f = fwd_[l].forward(g, h, p);
    out.final_fwd = f.last.h;
    if (config_.bidirectional) {
      auto b = bwd_[l].forward(g, h, p);
      out.final_bwd = b.last.h;
      h = concat({f.states, b.states}, 1);  // h_j = [->h_j ; <-h_j]  [N, 2H]
    } else {
      h = f.states;
    }
    if (l + 1 < fwd_.size()) h = dropout(h, config_.dropout);
  }
  const int64_t Dm = annotation_dim();
  // back to the batch's rows: annotations [S, B, Dm] (0 at padding), final states [B, H]
  Var padded = p.dense() ? h : scatter_rows(h, p.rows, S * B);
  out.annotations = permute(reshape(padded, Shape{S, B, Dm}), {1, 0, 2});  // [B, S, Dm]
  if (!p.identity) {
    std::vector<int32_t> where(static_cast<size_t>(B));  // where[b]: b's place in p.order
    for (int64_t i = 0; i < B; ++i) where[p.order[i]] = static_cast<int32_t>(i);
    out.final_fwd = gather_rows(out.final_fwd, where);
    if (out.final_bwd.valid()) out.final_bwd = gather_rows(out.final_bwd, where);
  }
  return out;
}

}  // namespace heed
