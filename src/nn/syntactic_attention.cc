// Syntactic attention as an encoder layer (the equations are in the header).
#include "heed/nn/syntactic_attention.h"

#include <utility>

#include "heed/autograd/ops.h"
#include "heed/nn/init.h"

namespace heed {

SyntacticAttention::SyntacticAttention(int64_t dim, const Scope& s) : dim_(dim) {
  root_ = &s.param("root", {dim}, Init::normal(0.1f));
  W_ = &s.param("W", {dim, dim}, Init::glorot_uniform());
  u_ = &s.param("u", {1, dim}, Init::zeros());
  Wo_ = &s.param("W_o", {dim, 2 * dim}, Init::glorot_uniform());
  bo_ = &s.param("b_o", {dim}, Init::zeros());
}

SyntacticAttention::Output SyntacticAttention::forward(Graph& g, Var x,
                                                       std::span<const int32_t> lengths) const {
  const int64_t B = x.dim(0), S = x.dim(1), D = dim_;
  // p = [r ; x_1 .. x_S]: the root first, [B, S + 1, D]
  Var root = add(g.constant(g.zeros(Shape{B, 1, D})), reshape(g.param(*root_), Shape{1, 1, D}));
  Var p = concat({root, x}, 1);
  // theta(h -> m) = p_h^T W x_m + u^T p_h  [B, S + 1, S]
  Var theta = add(matmul(matmul(p, g.param(*W_)), x, {.trans_b = true}), linear(p, g.param(*u_)));
  Var mu = dependency_marginals(theta, lengths);  // [B, S + 1, S]
  Var parent = matmul(mu, p, {.trans_a = true});  // c_m = sum_h mu(h -> m) p_h  [B, S, D]
  Var children = matmul(slice(mu, 1, 1, S), x);   // c~_h = sum_m mu(h -> m) x_m  [B, S, D]
  Var mixed = linear(concat({parent, children}, 2), g.param(*Wo_), g.param(*bo_));
  return {add(x, mixed), mu};
}

namespace {

class SyntacticEncoder final : public SequenceEncoder {
 public:
  SyntacticEncoder(std::unique_ptr<SequenceEncoder> inner, const Scope& scope)
      : inner_(std::move(inner)), layer_(inner_->width(), scope / "syntactic") {}
  int64_t width() const override { return inner_->width(); }
  Output encode(Graph& g, std::span<const int32_t> ids, int64_t S, std::span<const int32_t> lengths,
                const Options& o) const override {
    return over(g, inner_->encode(g, ids, S, lengths, o), lengths, o);
  }
  Output encode_vectors(Graph& g, Var x, std::span<const int32_t> lengths,
                        const Options& o) const override {
    return over(g, inner_->encode_vectors(g, x, lengths, o), lengths, o);
  }

 private:
  Output over(Graph& g, Output e, std::span<const int32_t> lengths, const Options& o) const {
    SyntacticAttention::Output s = layer_.forward(g, e.states, lengths);
    e.states = s.states;
    if (o.tree) e.tree = s.parents.value();
    return e;
  }
  std::unique_ptr<SequenceEncoder> inner_;
  SyntacticAttention layer_;
};

}  // namespace

std::unique_ptr<SequenceEncoder> wrap_syntactic_attention(std::unique_ptr<SequenceEncoder> inner,
                                                          const Scope& scope) {
  return std::make_unique<SyntacticEncoder>(std::move(inner), scope);
}

}  // namespace heed
